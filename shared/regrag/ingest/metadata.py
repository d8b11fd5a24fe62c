"""A document's metadata, resolved field by field from its sources (the first that gives a value wins):

  1. the sidecar object `<object>.meta.json` (JSON; Chinese allowed), checked against SIDECAR below;
  2. the object's custom metadata (ASCII; percent-encoded values are decoded), checked the same way;
  3. the text itself: title from the heading, province and level from the title, and the two dates of the
     version (promulgation, entry into force) from its header and its 施行 clause (resolve_dates);
  4. defaults: province national, asset general, doc_class general, level unknown, corpus from the object
     prefix `corpora/<name>/` or `default`.

Each value's source is kept in `DocumentMeta.provenance`. A sidecar that breaks its schema (a wrong type, a bad
date, an unknown code, a misspelt field) is a permanent failure naming the field: stored unchecked, a boolean
`supersedes` or a list as `title` would end up in citations.
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.ids import CORPUS_PREFIX_RE
from regrag.domain.models import DEFAULT_CORPUS, IMPLEMENTS, REPEALS, DateException, TitleReference
from regrag.inputs import schemas
from regrag.ports import Blob
from regrag.text.dates import BASIS_NONE, entry_into_force
from regrag.text.legal import article_label, find_cross_references
from regrag.text.numerals import HEADING_LABEL, parse_numeral, unnamed
from regrag.text.relations import find_parents, find_repeals, title_key

SIDECAR: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "maxProperties": 40,
    "properties": {
        "doc_id": schemas.DOC_ID,
        "title": {"type": "string", "minLength": 1, "maxLength": 300, "description": "the title, without 《》"},
        "effective_date": {**schemas.DATE, "description": "施行: the day this version took effect"},
        "promulgated": {**schemas.DATE, "description": "公布: the day this version was adopted"},
        "effective_to": {**schemas.DATE, "description": "the day this version stopped being in force"},
        "amendment_effective_date": {
            **schemas.DATE,
            "description": "施行 of the latest amendment, when the amended text does not state it",
        },
        "province": {"type": "string", "enum": list(schemas.PROVINCE_CODES), "x-case-insensitive": True},
        "asset": {"type": "string", "enum": list(schemas.ASSETS), "x-case-insensitive": True},
        "doc_class": {"type": "string", "enum": list(schemas.DOC_CLASSES), "x-case-insensitive": True},
        "regulation_level": {"type": "string", "enum": list(schemas.LEVELS), "x-case-insensitive": True},
        "supersedes": {**schemas.DOC_ID, "title": "document id (of the version this one replaces)"},
        "source_url": {"type": "string", "maxLength": 2000, "pattern": r"^https?://\S+$", "title": "http(s) URL"},
        "url": {"type": "string", "maxLength": 2000, "pattern": r"^https?://\S+$", "title": "http(s) URL"},
        "source": {"type": "string", "maxLength": 1000},
        "corpus": schemas.CORPUS_NAME,
    },
}
FIELDS = tuple(k for k in SIDECAR["properties"] if k != "url")
_HEADING_LABEL_RE = re.compile(unnamed(HEADING_LABEL))
_LOWER = ("province", "asset", "doc_class", "regulation_level")


def sidecar_values(name: str, blob: Blob | None) -> dict[str, Any]:
    """The sidecar's fields, checked; {} without a sidecar. InvalidInput naming the sidecar and the field."""
    if blob is None:
        return {}
    try:
        data = json.loads(blob.data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InvalidInput(f"{name}: sidecar is not valid UTF-8 JSON ({exc})") from exc
    return _checked(name, "sidecar", {k: v for k, v in _object(name, data).items() if v is not None})


def _object(name: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput(f"{name}: sidecar must hold a JSON object")
    return data


def object_metadata_values(name: str, metadata: dict[str, str]) -> dict[str, Any]:
    """The object's custom metadata (GCS keeps it ASCII: Chinese arrives %-encoded), checked like a sidecar;
    keys that are not metadata fields are other tools' and ignored."""
    out: dict[str, Any] = {}
    for key in FIELDS:
        raw = metadata.get(key) or metadata.get(key.replace("_", "-"))
        if raw:
            out[key] = urllib.parse.unquote(raw)
    return _checked(name, "object metadata", out)


def _checked(name: str, source: str, values: dict[str, Any]) -> dict[str, Any]:
    try:
        schemas.check(SIDECAR, values)
    except InvalidInput as exc:
        raise InvalidInput(f"{name}: {source}: {exc}") from exc
    out = {k: v for k, v in values.items() if v != ""}
    if "url" in out:
        out.setdefault("source_url", out.pop("url"))
    for key in _LOWER:
        if key in out:
            out[key] = out[key].lower()
    if "title" in out:
        out["title"] = out["title"].strip().strip("《》")
    return out


def defaults(name: str, derive_doc_id: Any) -> dict[str, Any]:
    prefix = CORPUS_PREFIX_RE.match(name)
    return {"doc_id": derive_doc_id(name), "corpus": prefix.group(1) if prefix else DEFAULT_CORPUS}


def layered(layers: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, str]]:
    """Values and their provenance: for each field, the first layer that gives it."""
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for source, layer in layers:
        for key, value in layer.items():
            if key not in values:
                values[key] = value
                provenance[key] = source
    return values, provenance


@dataclass(frozen=True)
class ResolvedDates:
    """The dates of a version and where each came from, and what ingest corrected or doubted on the way."""

    values: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)


def resolve_dates(
    values: dict[str, Any], provenance: dict[str, str], text: str, header_lines: list[str]
) -> ResolvedDates:
    """`promulgated` and `effective_date` (施行) of this version, with provenance and warnings.

    The text decides where it states a date (regrag.text.dates: a 施行 clause, 自公布之日起施行 read against the
    header, or the date of the latest amendment of an amended text), with two exceptions for explicit metadata:
    - a sidecar `effective_date` EARLIER than the text's is a promulgation date (or an older version's date)
      given as the effective one: the corpus manifest does this for about half of its documents. The text wins,
      the sidecar's value becomes `promulgated` when it is not older than the header's, and a warning says so;
    - a sidecar `effective_date` LATER than the text's is kept: headers omit later amendments by decision (the
      file of 不动产登记暂行条例 lists 2014 while its version is of 2019), which take effect on their own date.
      Later than every date of the header, it is also this version's promulgation date. A warning says so. When
      the text records no amendment, the date is also marked uncertain (`effective_date_uncertain`) unless the
      sidecar gives `promulgated` too: a date the text does not record at all is as likely the adoption of an
      amendment as its entry into force (the
      corpus's manifest dates 建设项目环境保护管理条例 2017-07-16, the revision's adoption; it took effect on
      2017-10-01, and the text's header and clause are the 1998 original's); a sidecar
      `amendment_effective_date` not before it settles it.
    Where the text states nothing, the sidecar's date stands, else the latest header date (inferred).

    An amended text that does not state when its latest amendment took effect (dates.EntryIntoForce.amendment:
    可再生能源法, amended 2009-12-26 by a decision in force on 2010-04-01) is dated by the amendment's adoption,
    and that date is marked uncertain (`effective_date_uncertain`), unless metadata says when it took effect: a
    sidecar `amendment_effective_date` (not before the adoption), or an `effective_date` later than the adoption.
    An `amendment_effective_date` given for a text that states its own date, or that records no amendment, is
    not used, with a warning.
    """
    found = entry_into_force(text, header_lines)
    given, source = values.get("effective_date"), str(provenance.get("effective_date"))
    out: dict[str, Any] = {
        "exceptions": tuple(
            DateException(e.scope, articles_named(e.scope), e.date, e.clause) for e in found.exceptions
        ),
        "references": references(text, str(values.get("title", ""))),
    }
    prov: dict[str, str] = {}
    warnings: list[str] = []
    unconfirmed = False  # a later sidecar date the text does not record, and no promulgation date beside it
    header = found.promulgated
    effective, effective_from = found.effective, "text"
    promulgated, promulgated_from = header, "text"
    if given and found.effective and given < found.effective:
        warnings.append(
            f"{source} effective_date {given} is earlier than the entry into force the text states "
            f"({found.effective}: “{found.clause}”): {found.effective} is used"
            + (f", {given} kept as the promulgation date" if not header or given >= header else "")
        )
        if not header or given >= header:
            promulgated, promulgated_from = given, source
    elif given and found.effective and given > found.effective:
        warnings.append(
            f"{source} effective_date {given} is later than the date the text implies "
            f"({found.effective}, {found.basis}: “{found.clause or ''}”): {given} is used"
        )
        effective, effective_from = given, source
        unconfirmed = not values.get("promulgated")
        if not header or given > header:
            promulgated, promulgated_from = given, source
    elif given:
        effective, effective_from = given, source
    elif found.effective is None and header:
        effective, effective_from = header, "inferred"
    if values.get("promulgated"):
        promulgated, promulgated_from = values["promulgated"], str(provenance["promulgated"])
    amended = values.get("amendment_effective_date")
    amended_from = str(provenance.get("amendment_effective_date"))
    uncertain = False
    if found.amendment and amended and amended >= found.amendment:
        effective, effective_from = amended, amended_from
    elif unconfirmed and amended and given and amended >= given:
        # the later sidecar date is an amendment's adoption the text does not record, and the sidecar says when
        # that amendment took effect
        effective, effective_from = amended, amended_from
    elif found.amendment:
        if amended:
            warnings.append(
                f"{amended_from} amendment_effective_date {amended} is before the amendment's adoption "
                f"({found.amendment}: “{found.amendment_line}”): not used"
            )
        uncertain = effective == found.amendment
    elif amended:
        reason = (
            f"the text states when this version took effect ({found.effective}: “{found.clause}”)"
            if found.effective
            else "the text records no amendment"
        )
        warnings.append(f"{amended_from} amendment_effective_date {amended} is not used: {reason}")
        uncertain = unconfirmed
    else:
        uncertain = unconfirmed
    out["effective_date_uncertain"] = uncertain
    out["amendment_line"] = found.amendment_line if found.amendment else None
    if effective:
        out["effective_date"], prov["effective_date"] = effective, effective_from
    if promulgated:
        out["promulgated"], prov["promulgated"] = promulgated, promulgated_from
    if found.clause and found.basis != BASIS_NONE:
        out["effective_clause"] = found.clause
    out["date_warnings"] = tuple(warnings)
    out["title_key"] = title_key(str(values.get("title", "")))
    return ResolvedDates(out, prov)


def articles_named(scope: str) -> tuple[str, ...]:
    """The article labels a clause's subject names: 第三十六条、第三十七条 → both; 第十条至第十二条 → the range.
    Chapters and sections (第五章) are resolved against the chunks' headings by `with_chapter_articles`."""
    refs = find_cross_references(scope)
    labels = [r.label for r in refs]
    for left, right in itertools.pairwise(refs):
        if scope[left.end : right.start].strip() in ("至", "到", "—", "-", "～"):
            first, last = _number(left.label), _number(right.label)
            if first and last and first < last <= first + 500:
                labels += [article_label(n) for n in range(first + 1, last)]
    return tuple(dict.fromkeys(labels))


def _number(label: str) -> int | None:
    inner = label.removeprefix("第").split("条")[0]
    value = parse_numeral(inner) if inner else None
    return value or None


def with_chapter_articles(
    exceptions: tuple[DateException, ...], headings: dict[str, tuple[str, ...]]
) -> tuple[DateException, ...]:
    """Exceptions whose scope names a 编/章/节 get that part's articles (`headings`: article label → heading path)."""
    out = []
    for exc in exceptions:
        parts = [m.group(0) for m in _HEADING_LABEL_RE.finditer(exc.scope)]
        if parts and not exc.articles:
            named = tuple(a for a, path in headings.items() if any(h.startswith(p) for h in path for p in parts))
            exc = DateException(exc.scope, named, exc.date, exc.clause)
        out.append(exc)
    return tuple(out)


def references(text: str, title: str) -> tuple[TitleReference, ...]:
    """The acts the text repeals and the ones it implements (regrag.text.relations), unresolved to documents."""
    start = text.find("第一条")
    parents = find_parents(text[start:] if start >= 0 else text, title)
    repeals = tuple(
        TitleReference(REPEALS, r.title, r.clause, r.date, key=title_key(r.title)) for r in find_repeals(text)
    )
    return repeals + tuple(TitleReference(IMPLEMENTS, r.title, r.clause, key=title_key(r.title)) for r in parents)
