"""Which provinces a question is about, from the place names it mentions (广东, 深圳, 淄博市 …).

A question about a project in 江苏 is answered by national law and 江苏's own rules; another province's local
regulation does not apply there, however well its words match. Retrieval uses the detected provinces to rank
the applicable rules first (regrag.query.retrieve.scope_first) when the request sets no province filter.

Matching is a greedy longest-match scan over a gazetteer of the 31 provinces, their prefecture-level cities and
a few regions that span provinces (长三角, 京津冀; data/places.tsv), so 浙江西部 reads 浙江 (not 江西) and 黄河北岸
reads the river (not 河北). Names that are also everyday words (日照 "sunshine", 开封 "to unseal") count only when
followed by 市/州/盟/地区.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from regrag.text.inference import PROVINCES

# water bodies whose names contain a province name (黄河北岸 is not 河北); they consume the text and match nothing
_FEATURES = ("黄河", "淮河", "太湖", "洞庭湖", "鄱阳湖", "渤海湾")
_SUFFIXES = ("市", "州", "盟", "地区")


@dataclass(frozen=True)
class Place:
    name: str
    provinces: tuple[str, ...]  # empty: a feature that blocks a false match; several: a region (长三角)
    needs_suffix: bool = False


@dataclass(frozen=True)
class PlaceScope:
    """The provinces a text mentions, in order of first mention, and the names that said so."""

    provinces: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.provinces)

    def to_dict(self) -> dict[str, list[str]]:
        return {"provinces": list(self.provinces), "names": list(self.names)}


@cache
def gazetteer() -> dict[str, Place]:
    places = {name: Place(name, (code,)) for name, code in PROVINCES.items()}
    places["内蒙"] = Place("内蒙", ("nm",))
    text = resources.files("regrag.data").joinpath("places.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, codes, flag = [*line.split("\t"), "", ""][:3]
        provinces = tuple(codes.split(","))
        unknown = [c for c in provinces if c not in PROVINCES.values()]
        if unknown:
            raise ValueError(f"places.tsv: unknown province code(s) {unknown} for {name!r}")
        places.setdefault(name, Place(name, provinces, flag.strip() == "suffix"))
    for feature in _FEATURES:
        places[feature] = Place(feature, ())
    return places


@cache
def _longest_name() -> int:
    return max(map(len, gazetteer()))


def mentioned_provinces(text: str) -> PlaceScope:
    places = gazetteer()
    longest = _longest_name()
    provinces: dict[str, None] = {}
    names: dict[str, None] = {}
    i = 0
    while i < len(text):
        for size in range(min(longest, len(text) - i), 1, -1):
            place = places.get(text[i : i + size])
            if place is None:
                continue
            if place.needs_suffix and not text.startswith(_SUFFIXES, i + size):
                continue
            if place.provinces:
                provinces.update(dict.fromkeys(place.provinces))
                names.setdefault(place.name)
            i += size
            break
        else:
            i += 1
    return PlaceScope(tuple(provinces), tuple(names))
