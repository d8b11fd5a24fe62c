"""Which provinces a question is about, from the place names it mentions (广东, 深圳, 淄博市 …).

A question about a project in 江苏 is answered by national law and 江苏's own rules; another province's local
regulation does not apply there, however well its words match. Retrieval uses the detected provinces to rank
the applicable rules first (regrag.query.retrieve.scope_first) when the request sets no province filter.

Matching is a greedy longest-match scan over a gazetteer of the 31 provinces, their prefecture-level cities and
a few regions that span provinces (长三角, 京津冀; data/places.tsv), so 浙江西部 reads 浙江 (not 江西) and 黄河北岸
reads the river (not 河北). Names that are also everyday words (日照 "sunshine", 开封 "to unseal") count only when
followed by 市/州/盟/地区.

A question can also ask for a place's own rule (四川省…补偿标准, 海南省供用电条例对…): `rule_authors` reads the places
named before a word that names a rule in the same clause (data/rule_words.tsv), so that judge refuses when no quote
comes from there. A place after 在 / 到 / 去 / 从 is where something happens, not whose rule is asked.

A document ingested without a sidecar gets its province from where it was issued (`issuing_place`): the place
its title opens with (深圳市…条例, the issuer of a local act names itself first), else the places its issuer lines
name (the promulgation header, a signature block), with the 2,805 county-level names of data/counties.tsv
added (宝安区, 昆山市: whole names only, many bare ones are words). A national body (国务院, a ministry:
regrag.text.inference.national_body) in the title or the issuer lines makes it national, and so does a title
that names no place and ends in a form only national acts take (…法, …条例: `national_form`). Anything else is not
known, and says why: a place the title names elsewhere (关于支持海南…的意见 is national), a name several provinces
share (鼓楼区), a title that opens like a local issuer's the gazetteer does not know (莱芜市…, a city merged
into 济南 in 2019), or nothing at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from regrag.data import table
from regrag.text.inference import PROVINCES, local_prefix, national_body, national_form
from regrag.text.segment import CLAUSE_RE

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
    for row in table.rows("places.tsv", 3, optional=1):
        name, codes, flag = row.cells
        places.setdefault(name, Place(name, _provinces(row, codes), flag.strip() == "suffix"))
    for feature in _FEATURES:
        places[feature] = Place(feature, ())
    return places


@cache
def _longest_name() -> int:
    return max(map(len, gazetteer()))


@cache
def document_places() -> tuple[dict[str, Place], int]:
    """The gazetteer with the county-level names of data/counties.tsv (whole: 宝安区, 昆山市), and the longest
    name's length: for a document's title and issuer lines, never for questions (a question says 朝阳 for the
    district and the city alike)."""
    places = dict(gazetteer())
    for row in table.rows("counties.tsv", 2):
        name, codes = row.cells
        places.setdefault(name, Place(name, _provinces(row, codes)))
    return places, max(map(len, places))


def _provinces(row: table.Row, codes: str) -> tuple[str, ...]:
    """A data row's province codes (gd or gd,hk), each a known one."""
    provinces = tuple(codes.strip().split(","))
    if any(c not in PROVINCES.values() for c in provinces):
        raise row.error("known province codes")
    return provinces


def _place_at(text: str, i: int, places: dict[str, Place], longest: int) -> Place | None:
    """The longest name starting at `i` (a name that is also a word only before 市/州/盟/地区)."""
    for size in range(min(longest, len(text) - i), 1, -1):
        place = places.get(text[i : i + size])
        if place is not None and not (place.needs_suffix and not text.startswith(_SUFFIXES, i + size)):
            return place
    return None


def _scan(text: str, places: dict[str, Place], longest: int) -> Iterator[Place]:
    """The names in `text`, left to right, longest first; a matched name (a river included) is consumed."""
    for _, place in _scan_at(text, places, longest):
        yield place


def _scan_at(text: str, places: dict[str, Place], longest: int) -> Iterator[tuple[int, Place]]:
    """`_scan` with where each name starts."""
    i = 0
    while i < len(text):
        place = _place_at(text, i, places, longest)
        if place is None:
            i += 1
            continue
        yield i, place
        i += len(place.name)


def mentioned_provinces(text: str) -> PlaceScope:
    provinces: dict[str, None] = {}
    names: dict[str, None] = {}
    for place in _scan(text, gazetteer(), _longest_name()):
        if place.provinces:
            provinces.update(dict.fromkeys(place.provinces))
            names.setdefault(place.name)
    return PlaceScope(tuple(provinces), tuple(names))


# --- whose rule a question asks for ---------------------------------------------------------------------------

_OF_PLACE = ("在", "到", "去", "从")  # prepositions of place: 在江苏建… says where, not whose rule


@cache
def rule_words() -> re.Pattern[str]:
    """data/rule_words.tsv: the words that name a rule or what a rule sets (规定, 标准, 条例, 补贴 …)."""
    words = []
    for row in table.rows("rule_words.tsv", 2):
        if not row.cells[1].startswith("corpus "):
            raise row.error("word, source (corpus N/M)")
        words.append(re.escape(row.cells[0]))
    return re.compile("|".join(words))


def rule_authors(text: str) -> PlaceScope:
    """The places a question asks the own rule of: named in a clause that goes on to name a rule or what a rule
    sets (四川省小水电站退出的补偿标准, 海南省供用电条例对…如何规定, 南京本地对…有什么补贴规定), not after a
    preposition of place (在福建海边建一个风电场：where the project is, which national law may settle), nor right
    after a place so named (在辽宁省沈阳市建…)."""
    provinces: dict[str, None] = {}
    names: dict[str, None] = {}
    places, longest = gazetteer(), _longest_name()
    for clause in CLAUSE_RE.finditer(text):
        body = clause.group(0)
        where = -1  # the end of the last place named as where (在辽宁沈阳: 沈阳 goes on saying where)
        for i, place in _scan_at(body, places, longest):
            if body[:i].endswith(_OF_PLACE) or i == where:
                where = _past_division(body, i + len(place.name))
            elif place.provinces and rule_words().search(body, i):
                provinces.update(dict.fromkeys(place.provinces))
                names.setdefault(place.name)
    return PlaceScope(tuple(provinces), tuple(names))


# what follows a place's name (辽宁省沈阳市): the suffixes a city's name takes, and those of a province and a county
_DIVISIONS = ("自治区", "省", *_SUFFIXES, "县", "区")


def _past_division(text: str, end: int) -> int:
    """`end` moved past the name of an administrative division written after a place (省 in 辽宁省沈阳)."""
    for division in _DIVISIONS:
        if text.startswith(division, end):
            return end + len(division)
    return end


# --- where a document was issued ------------------------------------------------------------------------------

FROM_TITLE = "title"
FROM_ISSUER = "issuer"


@dataclass(frozen=True)
class IssuingPlace:
    """Where a document was issued, as far as its own text tells.

    Attributes:
        province: a province code, "national", or None when the text does not tell (see `doubt`).
        source: FROM_TITLE or FROM_ISSUER (the header's promulgation lines, a signature block); "" when unknown.
        names: the words that told (深圳, 国务院), or the place names that could not decide.
        doubt: why the province is not known, for the ingest summary and the audit; None when it is.
    """

    province: str | None
    source: str = ""
    names: tuple[str, ...] = ()
    doubt: str | None = None

    @property
    def evidence(self) -> str | None:
        """'title: 深圳' / 'issuer: 国务院': what a document view shows beside an inferred province."""
        return f"{self.source}: {'、'.join(self.names)}" if self.province and self.names else None


def issuing_place(title: str, issuer_lines: Sequence[str]) -> IssuingPlace:
    """The province a document was issued in, from its title and its issuer lines (module docstring).

    Args:
        title: the document's title (《》 allowed).
        issuer_lines: the promulgation lines under the title and the signature lines at its end
            (regrag.text.inference.signature_lines).
    """
    title = title.strip().strip("《》").strip()
    places, longest = document_places()
    body = national_body(title, at_start=True)
    if body:
        return IssuingPlace("national", FROM_TITLE, (body,))
    lead = _place_at(title, 0, places, longest)
    if lead is not None and len(lead.provinces) == 1:
        return IssuingPlace(lead.provinces[0], FROM_TITLE, (lead.name,))
    named = [p for line in issuer_lines for p in _scan(line, places, longest) if p.provinces]
    local = {p.provinces[0] for p in named if len(p.provinces) == 1}
    if lead is not None and lead.provinces:  # a name several provinces share: the issuer lines may settle it
        local &= set(lead.provinces)
    if len(local) == 1:
        province = local.pop()
        names = tuple(dict.fromkeys(p.name for p in named if p.provinces == (province,)))
        return IssuingPlace(province, FROM_ISSUER, names)
    if local:
        names = tuple(dict.fromkeys(p.name for p in named if len(p.provinces) == 1))
        return IssuingPlace(None, "", names, f"the issuer lines name places of several provinces ({'、'.join(names)})")
    if lead is not None and lead.provinces:
        doubt = f"the title opens with {lead.name}, a name of several provinces ({'/'.join(lead.provinces)})"
        return IssuingPlace(None, "", (lead.name,), doubt)
    prefix = local_prefix(title)
    if prefix:
        return IssuingPlace(None, "", (prefix,), f"the title opens with {prefix}, a place the gazetteer does not know")
    bodies = [b for b in (national_body(line) for line in issuer_lines) if b]
    if bodies:
        return IssuingPlace("national", FROM_ISSUER, tuple(dict.fromkeys(bodies)))
    elsewhere = [p.name for p in _scan(title, places, longest) if p.provinces]
    if elsewhere:
        names = tuple(dict.fromkeys(elsewhere))
        return IssuingPlace(None, "", names, f"the title names {'、'.join(names)}, but not as its issuer")
    form = national_form(title)
    if form:
        return IssuingPlace("national", FROM_TITLE, (form,))
    return IssuingPlace(None, doubt="neither the title nor an issuer line names a place or a national body")
