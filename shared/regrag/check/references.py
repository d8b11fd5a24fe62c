"""Regulation references in a lawyer's document, found the way Chinese legal writing makes them.

- 《中华人民共和国电力法》第十条, short titles (《电力法》), titles with a version (《X》（2018年修正）,
  2025年3月修订的《X》);
- 《条例》 / 《办法》 … and 本法 / 该条例 / 上述办法 … referring back to the last title of that kind (or to the
  title a definition named: 《X》（以下简称《条例》）);
- 第X条之一, 第X条第X款, 第X条第（X）项 / 第X项, 第X条第X款第（X）项, Arabic numbers (第10条);
- lists and ranges: 第十条、第十二条, 第十条和第十一条, 第十条至第十二条 (each article checked on its own);
- quotations “…” attributed to a reference: those after it in the same sentence (依《X》第N条，“…”; 《X》第N条规定：
  “…”), or just before a reference in brackets (“…”（《X》第N条）).

A bare 第X条 with no title or 本法 before it is not a reference: in a memo it is usually a clause of a contract
(分包合同第12.2条). Pure functions: offsets are those of the text given.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

from regrag.check.catalogue import TYPE_WORDS, title_type
from regrag.text.normalize import normalize
from regrag.text.numerals import parse_numeral
from regrag.text.relations import title_key

_NUM = r"(?:[零〇一二三四五六七八九十百千两]+|[0-9]+)"
# 《title》 with titles nested inside (《青岛市实施〈中华人民共和国水法〉若干规定》, or with 《》 nested)
_TITLE_RE = re.compile(r"《((?:[^《》\n]|《[^《》\n]*》){1,80})》")
# 本法 / 该条例 / 上述办法 …: a reference back to the last title of that kind
_BACK_WORDS = "|".join(sorted((w for w in TYPE_WORDS if "实施" not in w), key=len, reverse=True))
_BACK_RE = re.compile(rf"(?:本|该|同|上述|前述|此)(?P<kind>{_BACK_WORDS})(?=第\s*{_NUM}\s*条)")
_ARTICLE = rf"第\s*(?P<main>{_NUM})\s*条(?:\s*之\s*(?P<sub>{_NUM}))?"
_PARAGRAPH = rf"第\s*(?P<para>{_NUM})\s*款"
_ITEM = rf"(?:第\s*[（(]?\s*(?P<item>{_NUM})\s*[）)]?\s*项|[（(]\s*(?P<item2>{_NUM})\s*[）)](?:\s*项)?)"
_SPEC_RE = re.compile(rf"{_ARTICLE}(?:\s*{_PARAGRAPH})?(?:\s*{_ITEM})?")
_PARA_ITEM_RE = re.compile(rf"(?=第|[（(])(?:{_PARAGRAPH})?(?:\s*{_ITEM})?")  # an empty match is no match
_LIST_SEP_RE = re.compile(r"\s*(?:、|，|,|和|及|以及|与|或者|或)\s*")
_RANGE_SEP_RE = re.compile(r"\s*(?:至|到|—|－|-|~|～)\s*")
# a version named with the title: （2018年修正）/（2018修订）/（2017年版） after it, 2025年3月修订的 before it
_VERSION_AFTER_RE = re.compile(
    r"\s*[（(]\s*(?P<y>[0-9]{4})\s*年?\s*(?:(?P<m>[0-9]{1,2})\s*月\s*(?:[0-9]{1,2}\s*日)?)?\s*"
    r"(?:修正|修订|修改|公布|颁布|发布|版|本)?(?:文本)?\s*[）)]"
)
_VERSION_BEFORE_RE = re.compile(
    r"(?P<y>[0-9]{4})\s*年\s*(?:(?P<m>[0-9]{1,2})\s*月\s*(?:[0-9]{1,2}\s*日)?)?\s*"
    r"(?:修正|修订|修改|公布|颁布|发布)(?:后)?的?\s*$"
)
# （以下简称《条例》）, （以下简称“条例”）, （下称条例）: an alias the document defines for the title just before
_ALIAS_RE = re.compile(
    r"\s*[（(]\s*(?:以下|下文)?简?称\s*[《“\"「]{0,2}(?P<alias>[^《》“”\"」）)，,]{1,20})[》”\"」]{0,2}\s*[）)]"
)
# a document number between a title and its article: 《关于…的通知》（发改能源〔2021〕1号）第三条
_DOC_NUMBER_RE = re.compile(r"\s*[（(][^（）()\n]{1,30}号\s*[）)]")
_QUOTE_RE = re.compile(r"“([^“”]{1,2000})”|「([^「」]{1,2000})」|\"([^\"\n]{1,2000})\"")
_SENTENCE_END = "。！？!?\n；;"
MIN_QUOTE_CHARS = 4  # shorter quotes are terms (“三同时”), not quotations of a provision
MAX_QUOTE_GAP = 80  # characters between a reference and its quotation, other quotations aside
_NOT_A_QUOTATION_RE = re.compile(r"(?:简称|下称|称为|称之为|所称|约定|名为|题为)\s*$")


@dataclass(frozen=True)
class Quote:
    text: str  # as written, without the quotation marks
    start: int  # of the text inside the marks
    end: int


@dataclass(frozen=True)
class ArticleRef:
    """One cited provision: an article, with the paragraph (款) and item (项) when named."""

    main: int
    sub: int = 0
    paragraph: int | None = None
    item: int | None = None


@dataclass(frozen=True)
class Reference:
    """A reference as written: its span, the title it names (or refers back to) and the provisions it cites.

    Attributes:
        text: the reference exactly as written (《条例》第三十一条, 本法第十条第二款, 《X》第十条至第十二条).
        title: the title as written without 《》 (for a back-reference: the title it refers to, or None when the
            document names none before it).
        form: "title" (a title in 《》), "alias" (a name the document defined, or 《条例》 for the last 条例),
            "back" (本法, 该条例 …).
        written: what the document wrote for the law (《条例》, 本法, 《电力法》).
        antecedent: where the title referred back to is written ([start, end) of the 《title》), for alias and back.
        version: "YYYY" or "YYYY-MM" when the reference names a version (（2018年修正）, 2025年3月修订的).
    """

    text: str
    start: int
    end: int
    title: str | None
    form: str
    written: str
    articles: tuple[ArticleRef, ...]
    quotes: tuple[Quote, ...] = ()
    # [start, end) of the words citing each of `articles`: the whole reference for the first (title included)
    # and for a range's articles, the item's own words for a list's later items (第二十三条 in 第二十二条、第二十三条)
    parts: tuple[tuple[int, int], ...] = ()
    antecedent: tuple[int, int] | None = None
    version: str | None = None
    # what the document itself says the reference provides, quotations left out: the rest of its sentence after
    # it (依《条例》第二十八条，应提前3天通知用户), or the sentence before it when it is cited in brackets after the
    # words (应提前3天通知用户（《条例》第二十八条）). A figure there that the article does not state is a caution
    said: str = ""


@dataclass
class _Mention:
    title: str
    start: int
    end: int


def _number(text: str) -> int:
    return parse_numeral(text.strip())


def _spec(m: re.Match[str], base: ArticleRef | None = None) -> ArticleRef:
    """An ArticleRef from a match of _SPEC_RE or _PARA_ITEM_RE (the latter continues `base`'s article)."""
    groups = m.groupdict()
    item = groups.get("item") or groups.get("item2")
    para = groups.get("para")
    if groups.get("main"):
        return ArticleRef(
            _number(groups["main"]),
            _number(groups["sub"]) if groups.get("sub") else 0,
            _number(para) if para else None,
            _number(item) if item else None,
        )
    assert base is not None
    return ArticleRef(base.main, base.sub, _number(para) if para else base.paragraph, _number(item) if item else None)


def _articles_at(text: str, pos: int) -> tuple[list[ArticleRef], list[tuple[int, int]], int] | None:
    """The provisions cited at `pos` (第十条, 第十条第二款, 第十条至第十二条, 第十条、第十二条 …), the span of
    the words that cite each (-1 for "where the reference starts"; a range's articles share the range's span, a
    list's items have their own: 《条例》第二十二条 | 第二十三条) and where the whole ends."""
    first = _SPEC_RE.match(text, pos)
    if first is None:
        return None
    out = [_spec(first)]
    spans = [(-1, first.end())]
    end = first.end()
    while True:
        rng = _RANGE_SEP_RE.match(text, end)
        if rng:
            upper = _SPEC_RE.match(text, rng.end())
            added: list[ArticleRef] = []
            if upper and upper.group("main") and not upper.group("sub"):
                last = _spec(upper)
                for number in range(out[-1].main + 1, min(last.main, out[-1].main + 200) + 1):
                    added.append(ArticleRef(number, 0, None, None) if number < last.main else last)
                stop_at = upper.end()
            else:
                # 第（一）项至第（三）项, 第一款至第三款: a range inside the same article
                inner = _PARA_ITEM_RE.match(text, rng.end())
                stop_at = inner.end() if inner else rng.end()
                if inner and inner.end() > rng.end():
                    last, first_ref = _spec(inner, out[-1]), out[-1]
                    if last.item is not None and first_ref.item is not None and last.item > first_ref.item:
                        added = [replace(first_ref, item=n) for n in range(first_ref.item + 1, min(last.item, 99) + 1)]
                    elif last.item is None and first_ref.paragraph and (last.paragraph or 0) > first_ref.paragraph:
                        stop = min(last.paragraph or 0, 99)
                        added = [replace(first_ref, paragraph=n) for n in range(first_ref.paragraph + 1, stop + 1)]
            if added:
                spans[-1] = (spans[-1][0], stop_at)  # the range's words cite every article in it
                out += added
                spans += [spans[-1]] * len(added)
                end = stop_at
                continue
        sep = _LIST_SEP_RE.match(text, end)
        if sep:
            following = _SPEC_RE.match(text, sep.end())
            if following:
                out.append(_spec(following))
                spans.append((following.start(), following.end()))
                end = following.end()
                continue
            same_article = _PARA_ITEM_RE.match(text, sep.end())
            if (
                same_article
                and same_article.end() > sep.end()
                and sep.group(0).strip() in ("、", "和", "及", "以及", "与", "或", "或者")
            ):
                out.append(_spec(same_article, out[-1]))
                spans.append((same_article.start(), same_article.end()))
                end = same_article.end()
                continue
        return out, spans, end


def _version_before(text: str, start: int) -> str | None:
    m = _VERSION_BEFORE_RE.search(text[max(0, start - 20) : start])
    return _year_month(m) if m else None


def _year_month(m: re.Match[str]) -> str:
    return f"{m.group('y')}-{int(m.group('m')):02d}" if m.group("m") else m.group("y")


def _generic_kind(title: str) -> str | None:
    """条例 for 《条例》, 办法 for 《办法》 …: a title that is only a kind of act refers back to the last one."""
    return title if title in TYPE_WORDS else None


def _antecedent(mentions: list[_Mention], kind: str) -> _Mention | None:
    """The last title of `kind` before a back-reference (条例 matches 《X条例》 and 《X实施条例》; 法 only laws)."""
    for mention in reversed(mentions):
        found = title_type(title_key(mention.title))
        if found is None:
            continue
        if found == kind or (kind != "法" and found.endswith(kind)) or (kind == "法" and found in ("法", "法典")):
            return mention
    return None


def find_references(text: str) -> list[Reference]:
    """Every reference in `text`, in order, with the quotations attributed to it (module docstring)."""
    folded = normalize(text)  # full-width digits and odd spaces folded; offsets map back one to one or via to_source
    work = folded.text
    mentions: list[_Mention] = []  # every 《title》 so far (antecedents)
    aliases: dict[str, _Mention] = {}
    refs: list[Reference] = []
    # a title inside a quotation belongs to the quoted text (“依照《行政处罚法》…”), not to the document
    quoted = [(q.start, q.end) for q in _quotes(work)]
    quoted_starts = [s for s, _ in quoted]

    def inside_quote(pos: int) -> bool:
        i = bisect.bisect_right(quoted_starts, pos) - 1
        return i >= 0 and quoted[i][0] <= pos < quoted[i][1]

    events = sorted(
        [(m.start(), 0, m) for m in _TITLE_RE.finditer(work) if not inside_quote(m.start())]
        + [(m.start(), 1, m) for m in _BACK_RE.finditer(work) if not inside_quote(m.start())],
        key=lambda e: (e[0], e[1]),
    )
    for _pos, kind, m in events:
        if kind == 0:
            written = m.group(1).strip()
            after = m.end()
            version = None
            vm = _VERSION_AFTER_RE.match(work, after)
            if vm:
                version, after = _year_month(vm), vm.end()
            number = _DOC_NUMBER_RE.match(work, after)
            if number:
                after = number.end()
            alias = _ALIAS_RE.match(work, after)
            generic = _generic_kind(written)
            if written in aliases:
                target: _Mention | None = aliases[written]
                form = "alias"
            elif generic:
                target = _antecedent(mentions, generic)
                form = "alias"
            else:
                target = _Mention(written, m.start(), m.end())
                form = "title"
                mentions.append(target)
            if alias:
                if target is not None:
                    aliases[alias.group("alias").strip()] = target
                after = alias.end()
            version = version or _version_before(work, m.start())
            start, written_text = m.start(), m.group(0)
        else:
            target = _antecedent(mentions, m.group("kind"))
            form, version, after = "back", None, m.end()
            start, written_text = m.start(), m.group(0)
        spaced = re.match(r"\s*", work[after:])
        found = _articles_at(work, after + (spaced.end() if spaced else 0))
        if found is None:
            continue
        articles, spans, end = found
        s, e = folded.to_source(start, end)
        parts = tuple(folded.to_source(start if a < 0 else a, b) for a, b in spans)
        antecedent = None
        if form != "title" and target is not None:
            antecedent = folded.to_source(target.start, target.end)
        refs.append(
            Reference(
                text=text[s:e],
                start=s,
                end=e,
                title=target.title if target else None,
                form=form,
                written=written_text,
                articles=tuple(articles),
                parts=parts,
                antecedent=antecedent,
                version=version,
            )
        )
    return _attach_said(text, _attach_quotes(text, refs))


def _quotes(text: str) -> list[Quote]:
    out = []
    for m in _QUOTE_RE.finditer(text):
        group = next(g for g in (1, 2, 3) if m.group(g) is not None)
        out.append(Quote(m.group(group), m.start(group), m.end(group)))
    return out


def _gap_ok(gap: str) -> bool:
    """Whether the text between a reference and a quotation keeps them together: the same sentence (a colon and
    a line break may separate 规定： from its quotation), not too far, and not a definition (简称“…”)."""
    squeezed = gap.rstrip()
    body = squeezed[:-1] if squeezed.endswith(("：", ":")) else squeezed
    if any(c in body for c in _SENTENCE_END) or len(body) > MAX_QUOTE_GAP:
        return False
    return not _NOT_A_QUOTATION_RE.search(gap)


def _attach_quotes(text: str, refs: list[Reference]) -> list[Reference]:
    quotes = [q for q in _quotes(text) if len("".join(q.text.split())) >= MIN_QUOTE_CHARS]
    attached: dict[int, list[Quote]] = {}
    ends = [r.end for r in refs]
    starts = [r.start for r in refs]
    for q in quotes:
        # the reference just before, in the same sentence, with no other reference between them
        i = bisect.bisect_right(ends, q.start - 1) - 1
        if i >= 0:
            gap = text[refs[i].end : q.start - 1]
            # quotations already attached to this reference sit in the gap: leave them out of its length
            # (a quotation that ends its sentence, “…。”, ends it for what follows too)
            for other in attached.get(i, []):
                stop = "。" if other.text.rstrip()[-1:] in "。！？!?" else ""
                gap = gap.replace(text[other.start - 1 : other.end + 1], stop)
            if _gap_ok(gap):
                attached.setdefault(i, []).append(q)
                continue
        # a quotation followed by its reference in brackets: “…”（《X》第N条）or “…”，见《X》第N条
        i = bisect.bisect_left(starts, q.end + 1)
        if i < len(refs):
            lead = text[q.end + 1 : refs[i].start]
            if re.fullmatch(r"\s*[（(，,]?\s*(?:见|参见|详见|引自)?\s*", lead):
                attached.setdefault(i, []).append(q)
    return [replace(r, quotes=tuple(attached[i])) if i in attached else r for i, r in enumerate(refs)]


_BRACKET_BEFORE = re.compile(r"[（(]\s*(?:见|参见|详见|依据|根据)?\s*$")
# 违反《X》第N条规定，…: the reference names the duty breached, and what follows is the consequence, set elsewhere
# (违反本条例第四十五条规定，危害供热设施安全的，…处三万元以上: the fine is not 第四十五条's)
_BREACHED = re.compile(r"违反\s*$")


def _attach_said(text: str, refs: list[Reference]) -> list[Reference]:
    """Each reference's `said`: the words of its sentence that are the document's own account of it, up to the
    next reference (依《电力法》第五十九条和《条例》第二十八条，…: the words are the last one's), quotations
    left out (they are checked verbatim)."""
    blank = list(text)
    for q in _quotes(text):
        blank[q.start - 1 : q.end + 1] = " " * (q.end + 1 - (q.start - 1))  # the quotation with its marks
    plain = "".join(blank)
    out = []
    for i, ref in enumerate(refs):
        following = refs[i + 1].start if i + 1 < len(refs) else len(plain)
        stop = next((j for j in range(ref.end, following) if plain[j] in _SENTENCE_END), following)
        said = "" if _BREACHED.search(plain, max(0, ref.start - 4), ref.start) else plain[ref.end : stop]
        bracket = _BRACKET_BEFORE.search(plain, max(0, ref.start - 8), ref.start)
        # cited in brackets after its words (…自行失效（《X》第二十二条），因此…): the words are those before it
        closed = re.match(r"\s*[）)]", plain[ref.end :]) is not None
        if bracket and (closed or not re.search(r"[\u4e00-\u9fff0-9]", said)):
            previous = refs[i - 1].end if i else 0
            begin = max(
                (j + 1 for j in range(bracket.start() - 1, previous - 1, -1) if plain[j] in _SENTENCE_END),
                default=previous,
            )
            said = plain[begin : bracket.start()]
        out.append(replace(ref, said=" ".join(said.split())))
    return out
