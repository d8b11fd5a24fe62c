"""Which stored law a title names: the full title, a short one (《电力法》 = 《中华人民共和国电力法》), or a title that
names one version of a law whose versions are titled differently (青岛市实施《水法》若干规定 / …的若干规定).

A law is a chain of versions linked by `supersedes`. A title matches by its key (regrag.text.relations.title_key:
brackets, spaces, the 中华人民共和国 prefix and a trailing (…) aside); failing that, a short title matches the
titles that contain its characters in order, starting with the same one and naming the same kind of act
(《环评法》 ⊂ 环境影响评价法), or that are it after a place name (《供用电条例》: 上海市供用电条例). A short title
that is itself the title of a real law in the catalogue (《仲裁法》) never stands for another law.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from regrag.check.catalogue import Catalogue, place_prefix, title_type
from regrag.domain.models import DocumentMeta
from regrag.text.relations import title_key

_PART_RE = re.compile(r"(?:第[一二三四五六七八九十]+编)?[^编]{1,8}编")
FOUND = "found"
AMBIGUOUS = "ambiguous"
NOT_FOUND = "not_found"


@dataclass(frozen=True)
class Law:
    """One act: its stored versions, oldest first."""

    versions: tuple[DocumentMeta, ...]

    @property
    def latest(self) -> DocumentMeta:
        return self.versions[-1]


@dataclass(frozen=True)
class Resolution:
    """What a title names: FOUND (one law; `pinned` the versions the title names when it names only some of
    them), AMBIGUOUS (several laws) or NOT_FOUND."""

    kind: str
    key: str
    laws: tuple[Law, ...] = ()
    pinned: frozenset[str] = frozenset()
    # the corpus holds the act in parts (民法典 合同编, 物权编: one numbering across them): each article is
    # looked for in every part, and an article of a part not held cannot be verified
    parts: bool = False
    short: bool = False  # matched as a short title (its characters in order), not by the title itself


def _subsequence(short: str, full: str) -> bool:
    it = iter(full)
    return all(ch in it for ch in short)


def _effective(meta: DocumentMeta) -> str:
    return meta.effective_date or meta.promulgated or ""


class TitleIndex:
    """The stored documents by title key and by version chain."""

    def __init__(self, documents: Iterable[DocumentMeta], catalogue: Catalogue) -> None:
        docs = {m.doc_id: m for m in documents}
        self.catalogue = catalogue
        parent = {d: d for d in docs}

        def root(d: str) -> str:
            while parent[d] != d:
                parent[d] = parent[parent[d]]
                d = parent[d]
            return d

        for meta in docs.values():
            for other in (meta.supersedes, meta.superseded_by):
                if other in docs:
                    parent[root(meta.doc_id)] = root(other)
        chains: dict[str, list[DocumentMeta]] = {}
        for doc_id, meta in docs.items():
            chains.setdefault(root(doc_id), []).append(meta)
        self.law_of: dict[str, Law] = {}
        for members in chains.values():
            law = Law(tuple(sorted(members, key=lambda m: (_effective(m), m.doc_id))))
            for m in members:
                self.law_of[m.doc_id] = law
        self.by_key: dict[str, list[DocumentMeta]] = {}
        for meta in docs.values():
            self.by_key.setdefault(title_key(meta.title), []).append(meta)

    def titles(self) -> tuple[str, ...]:
        return tuple(self.by_key)

    def resolve(self, title: str) -> Resolution:
        key = title_key(title)
        exact = self.by_key.get(key, [])
        if exact:
            return self._found(key, exact, exact_title=True)
        parts = [
            m
            for other, metas in self.by_key.items()
            if _PART_RE.fullmatch(other[len(key) :]) and other.startswith(key)
            for m in metas
        ]
        if parts:
            laws = tuple({id(self.law_of[m.doc_id]): self.law_of[m.doc_id] for m in parts}.values())
            return Resolution(FOUND, key, laws, parts=True)
        if key in self.catalogue:
            return Resolution(NOT_FOUND, key)  # a real law of its own name, not a short name of another
        kind = title_type(key)
        if kind is None or len(key) < 2:
            return Resolution(NOT_FOUND, key)
        matches = [
            meta
            for other, metas in self.by_key.items()
            if len(other) > len(key)
            and title_type(other) == kind
            and ((other[0] == key[0] and _subsequence(key, other)) or other[len(place_prefix(other) or "") :] == key)
            for meta in metas
        ]
        if not matches:
            return Resolution(NOT_FOUND, key)
        return replace(self._found(key, matches, exact_title=False), short=True)

    def _found(self, key: str, metas: list[DocumentMeta], exact_title: bool) -> Resolution:
        laws = list({id(self.law_of[m.doc_id]): self.law_of[m.doc_id] for m in metas}.values())
        if len(laws) > 1:
            return Resolution(AMBIGUOUS, key, tuple(laws))
        law = laws[0]
        named = frozenset(m.doc_id for m in metas)
        # a title that only some versions bear names those versions (the 2011 青岛 规定 is titled without 的)
        pinned = named if exact_title and len(named) < len(law.versions) else frozenset()
        return Resolution(FOUND, key, (law,), pinned)
