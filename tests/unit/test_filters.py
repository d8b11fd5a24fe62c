import pytest

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Filters
from regrag.inputs.filters import parse_filters


def test_empty_and_none():
    assert parse_filters(None) == Filters()
    assert parse_filters({}) == Filters()
    assert parse_filters({"province": [], "asset": ""}) == Filters()


def test_strings_lists_and_aliases():
    f = parse_filters(
        {
            "province": "gd,national",
            "asset": ["SOLAR"],
            "level": "local_regulation",
            "as_of": "2025-01-01",
            "corpora": ["guangdong"],
        }
    )
    assert f.province == ("gd", "national")
    assert f.asset == ("solar",)
    assert f.regulation_level == ("local_regulation",)
    assert f.as_of == "2025-01-01"
    assert f.corpus == ("guangdong",)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("gd", "filters must be a JSON object"),
        ({"provice": "gd"}, "unknown field 'provice' in filters; did you mean 'province'"),
        ({"province": "guangdong"}, "unknown value"),
        ({"asset": 3}, "string or a list"),
        ({"as_of": "2025-13-01"}, "not a valid date"),
        ({"as_of": 20250101}, "filters.as_of must be a string"),
        ({"date_from": "2020-01-01", "date_to": "2019-01-01"}, "after date_to"),
        ({"include_superseded": "yes"}, "true or false"),
        ({"corpus": ["Bad Name"]}, "'Bad Name' is not a valid corpus"),
        ({"doc_id": ["x" * 129]}, "longer than 128"),
        ({"province": ["gd"] * 51}, "at most 50"),
        ({"province": "\ud800"}, "unpaired surrogate"),
    ],
)
def test_bad_filters_are_rejected_with_a_reason(raw, message):
    with pytest.raises(InvalidInput, match=message):
        parse_filters(raw)
