"""The lexical tokenizer: real segmentation (not whitespace), the custom dictionary, jieba parity."""

import jieba
import pytest

from regrag.text.segment import STOPWORDS, load_terms, tokenize

from conftest import sample_text


def test_chinese_is_segmented_into_words_not_scored_as_one_token():
    tokens = tokenize("在广东建分布式光伏并网要满足什么条件？")
    assert "分布式光伏" in tokens and "并网" in tokens and "光伏" in tokens
    assert "什么" not in tokens and "？" not in tokens


def test_custom_dictionary_keeps_domain_terms_whole():
    for term in ("并网", "环境影响评价", "可再生能源", "分布式光伏"):
        assert term in tokenize(f"关于{term}的规定"), term
    assert ("并网", None) in load_terms()


def test_same_tokens_for_index_and_query():
    text = "电网企业应当与按照可再生能源开发利用规划建设的可再生能源发电企业签订并网协议。"
    assert tokenize(text) == tokenize(text)
    assert set(tokenize("可再生能源并网协议")) <= set(tokenize(text))


@pytest.fixture(scope="module")
def reference_jieba():
    seg = jieba.Tokenizer()
    for term, freq in load_terms():
        seg.add_word(term, freq)
    return seg


@pytest.mark.parametrize("doc_id", ["nat-law-0069", "sh-0001", "nat-law-0015"])
def test_rjieba_gives_the_tokens_of_reference_jieba(reference_jieba, doc_id):
    """Differential test: rjieba (Rust) against jieba (Python) with the same dictionary, on real articles."""
    text = sample_text(doc_id)[:6000]
    ours = tokenize(text)
    ref = [t.strip().lower() for t in reference_jieba.cut_for_search(text)]
    ref = [t for t in ref if t and any(ch.isalnum() for ch in t) and t not in STOPWORDS]
    assert ours == ref
