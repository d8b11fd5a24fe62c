"""The one reader of the package's data files (regrag.data.table): what every word list and table relies on."""

import pytest

from regrag.check.catalogue import load_catalogue
from regrag.data import table
from regrag.query.forms import forms
from regrag.text.places import document_places, gazetteer, rule_words
from regrag.text.segment import load_terms
from regrag.text.units import units


def test_comments_and_blank_lines_are_skipped_and_lines_keep_their_numbers():
    text = "# a header\n\nword\tcorpus 3/444\n  \n# note\nother\tcorpus 1/444\n"
    found = table.rows("words.tsv", 2, text=text)
    assert [(r.line, r.cells) for r in found] == [(3, ("word", "corpus 3/444")), (6, ("other", "corpus 1/444"))]


def test_optional_cells_left_off_read_as_empty():
    found = table.rows("places.tsv", 3, optional=1, text="北京\tbj\n上海\tsh\tsuffix\n")
    assert [r.cells for r in found] == [("北京", "bj", ""), ("上海", "sh", "suffix")]


@pytest.mark.parametrize("line", ["北京\n", "北京\tbj\tsuffix\textra\n"])
def test_a_row_with_too_few_or_too_many_cells_is_an_error_naming_file_and_line(line):
    with pytest.raises(ValueError, match=r"places\.tsv line 2: expected 3 tab-separated cells"):
        table.rows("places.tsv", 3, optional=1, text="# header\n" + line)


def test_a_row_names_itself_in_a_reader_s_own_error():
    row = table.rows("units.tsv", 2, text="x\ty\n")[0]
    assert str(row.error("a known unit")) == "units.tsv line 1: expected a known unit: 'x\\ty'"


def test_every_shipped_table_is_read_by_its_reader():
    """Each data file of the package parses as its reader reads it (a row added with a missing tab fails here, not
    as a word that never matches)."""
    assert units() and gazetteer() and document_places()[0] and rule_words().pattern and forms()
    assert load_catalogue().titles and load_terms()
