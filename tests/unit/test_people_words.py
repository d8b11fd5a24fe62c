"""Everyday words for the people of the asker's story (邻居, 老板) are not key terms: no article holds them."""

import pytest

from regrag.domain.models import Filters
from regrag.query.question import analyse, question_keywords
from regrag.text.people import people_words


def test_every_entry_says_where_it_comes_from_and_a_bad_row_is_an_error_naming_it():
    words = people_words()
    assert {"邻居", "老板", "孩子", "咱家"} <= words
    # the statutes' own words for the parties stay key terms: an article can hold them
    assert not words & {"父母", "子女", "亲属", "家属", "他人", "用户", "用人单位", "未成年人"}
    with pytest.raises(ValueError, match="line 1"):
        people_words("邻居\ta guess\n")
    with pytest.raises(ValueError, match="line 1"):
        people_words("邻居\tcilin Aj02C01\n")  # without its corpus count
    with pytest.raises(ValueError, match="line 2"):
        people_words("邻居\tcilin Aj02C01; corpus 0/444\n邻居\tcilin Aj02C01; corpus 0/444\n")


def test_the_people_of_the_story_are_not_key_terms_and_what_is_asked_about_is():
    terms = {k.term for k in question_keywords("邻居偷电怎么办")}
    assert terms == {"偷电"}
    assert {k.term for k in question_keywords("老板拖欠工资不给钱怎么办")} == {"拖欠", "工资", "拖欠工资", "给钱"}


def test_an_article_on_the_act_covers_the_whole_question_whoever_commits_it():
    """The relevance floor reads coverage: 邻居 counted, the 窃电 penalty covered half of 邻居偷电怎么办 and the floor
    refused it (the issue's trial); the statute names no neighbour, only the act."""
    q = analyse("邻居偷电怎么办？", Filters())
    assert q.coverage("违反本条例第三十一条规定，盗窃电能的，由电力管理部门责令停止违法行为") == 1.0
    assert all(k.term != "邻居" for k in q.anchors)
