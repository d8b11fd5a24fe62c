"""The bundled catalogue of national law and administrative-regulation titles (data/national_titles.tsv), which
tells a law that exists but is not in the corpus (unknown_law) from a title that names no law (wrong_title).

Only a title a national law or administrative regulation can bear is judged by it: one ending in 法, 法典 or 条例
with no place name first (a local regulation's title starts with its province or city) and no Party or military
prefix. Departmental rules may not be called 条例 (规章制定程序条例 第七条), so a national 条例 is an administrative
regulation; 办法, 规定 and 细则 may be departmental rules, which the catalogue does not list, so those titles are
never judged. The catalogue is a snapshot: a law adopted after its date is not in it (`as_of`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rapidfuzz import fuzz, process

from regrag.data import table
from regrag.text.places import gazetteer

CATALOGUE_FILE = "national_titles.tsv"
CATALOGUE_PATH = Path(__file__).resolve().parents[1] / "data" / CATALOGUE_FILE  # where the builder writes it
# the kind of act a title names, by its last words (longest first: 实施条例 before 条例, 办法 before 法)
TYPE_WORDS = (
    "实施细则",
    "实施办法",
    "实施条例",
    "条例",
    "办法",
    "规定",
    "细则",
    "规则",
    "决定",
    "意见",
    "通知",
    "法典",
    "法",
)
_NATIONAL_TYPES = ("法", "法典", "条例", "实施条例")
_NOT_STATE = ("中国共产党", "中国人民解放军", "中国人民武装警察", "中央军委", "军队", "党")
_COUNTY_RE = re.compile(r"^.{2,6}?(?:自治州|自治县|县|自治旗|经济特区)")
SUGGEST_MIN_SCORE = 80.0  # rapidfuzz ratio (0–100) of two title keys for a "did you mean"


def title_type(key: str) -> str | None:
    """The kind of act a title names (条例, 办法, 法 …), from its last words; None for anything else."""
    return next((w for w in TYPE_WORDS if key.endswith(w)), None)


def place_prefix(key: str) -> str | None:
    """The province, city or county a title starts with (山东省…, 青岛市…, ××县…), or None."""
    places = gazetteer()
    for size in range(min(len(key), 8), 1, -1):
        place = places.get(key[:size])
        if place is not None and place.provinces:
            rest = key[size:]
            if place.needs_suffix and not rest.startswith(("市", "州", "盟", "地区")):
                continue
            suffix = re.match(r"^(?:省|市|自治区|特别行政区|州|盟|地区)?", rest)
            return key[: size + (suffix.end() if suffix else 0)]
    county = _COUNTY_RE.match(key)
    return county.group(0) if county else None


def is_national_form(key: str) -> bool:
    """Whether a title (key) is one only a national law or administrative regulation bears: 法 / 法典 / 条例, no
    place first, not a Party or military regulation."""
    return title_type(key) in _NATIONAL_TYPES and place_prefix(key) is None and not key.startswith(_NOT_STATE)


@dataclass(frozen=True)
class Catalogue:
    """The titles with their level (法律 / 行政法规 / 宪法; empty when only another text names them), and the
    snapshot's date."""

    titles: dict[str, str]
    as_of: str
    source: str

    def __contains__(self, key: str) -> bool:
        return key in self.titles

    def suggest(self, key: str, extra: Sequence[str] = ()) -> str | None:
        """The closest known title (catalogue or `extra`, e.g. the corpus's titles) when it is close enough."""
        # a title that contains another or is contained in it names another act (X条例 / X条例实施细则), not a typo
        choices = [c for c in dict.fromkeys([*extra, *self.titles]) if c not in key and key not in c]
        found = process.extractOne(key, choices, scorer=fuzz.ratio, score_cutoff=SUGGEST_MIN_SCORE)
        return str(found[0]) if found else None


@cache
def load_catalogue() -> Catalogue:
    as_of, source = "", ""
    for line in table.read(CATALOGUE_FILE).splitlines():  # its header comments say when and whence
        if line.startswith("# as_of\t"):
            as_of = line.split("\t", 1)[1].strip()
        elif line.startswith("# Source:"):
            source = line.removeprefix("# Source:").strip()
    titles = {row.cells[0]: row.cells[1] for row in table.rows(CATALOGUE_FILE, 4, optional=2)}
    return Catalogue(titles, as_of, source)
