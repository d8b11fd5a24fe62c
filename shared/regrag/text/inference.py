"""Metadata inferred from a regulation's own text, used only where no sidecar or object metadata says more.

The province comes from where the document was issued (regrag.text.places.issuing_place, which reads the title
and the issuer lines this module finds); this module knows the province codes, the central bodies whose acts
apply nationwide, and where a text names its issuer.
"""

from __future__ import annotations

import re

from regrag.text.numerals import DATE_RE

# ISO 3166-2:CN subdivision codes, lower-cased: the same codes the corpus uses (gd 广东, ha 河南, …).
PROVINCES = {
    "北京": "bj", "天津": "tj", "河北": "he", "山西": "sx", "内蒙古": "nm", "辽宁": "ln", "吉林": "jl",
    "黑龙江": "hl", "上海": "sh", "江苏": "js", "浙江": "zj", "安徽": "ah", "福建": "fj", "江西": "jx",
    "山东": "sd", "河南": "ha", "湖北": "hb", "湖南": "hn", "广东": "gd", "广西": "gx", "海南": "hi",
    "重庆": "cq", "四川": "sc", "贵州": "gz", "云南": "yn", "西藏": "xz", "陕西": "sn", "甘肃": "gs",
    "青海": "qh", "宁夏": "nx", "新疆": "xj",
}  # fmt: skip
PROVINCE_NAMES = {code: name for name, code in PROVINCES.items()} | {"national": "全国"}
# The province of a document whose text does not tell where it was issued (no sidecar said either). Not a
# filter value: such a document is in no province's results, and never taken for nationwide law.
UNKNOWN_PROVINCE = "unknown"

_CJK = "\u4e00-\u9fff"
# Central bodies, whose acts apply nationwide: the NPC and its Standing Committee, the State Council, the Party
# centre, the Supreme Court and Procuratorate by name; 国家…局/委员会/署 (国家能源局, 国家发展和改革委员会) and
# ministries (生态环境部, 住房和城乡建设部) by form, a ministry only before what follows an issuer's name (令, 关于,
# 公告, 、 …) and never inside a word (内部, 全部).
_NATIONAL_BODY = (
    r"中华人民共和国|全国人民代表大会|全国人大|国务院|中共中央|中央军事委员会|最高人民法院|最高人民检察院"
    rf"|国家[{_CJK}]{{1,12}}?(?:总局|局|委员会|委|署)"
    rf"|(?<![{_CJK}])[{_CJK}]{{2,10}}?部(?=令|部务会议|关于|公告|、|\s|$|第)"
)
_NATIONAL_RE = re.compile(_NATIONAL_BODY)
# The forms only national acts take without a place in their title: a 法 is a law of the NPC (local legislatures
# make no 法), and a 条例 that names no region is an administrative regulation (行政法规制定程序条例 第五条 names
# them 条例; a local 条例 carries its region's name: 广东省…条例, 深圳经济特区…条例). 规定 and 办法 are every
# issuer's forms, and tell nothing.
_NATIONAL_FORM_RE = re.compile(r"(?:(?<![办方做说想用疗])法|条例)$")
# How a local issuer opens its title when the gazetteer does not know the place (莱芜市…, merged into 济南 in 2019;
# 横琴粤澳深度合作区…): two or more characters, then the kind of division. Not 市场/市政/县级…: words, not places.
_LOCAL_PREFIX_RE = re.compile(
    rf"^[{_CJK}]{{2,8}}?(?:省|市(?![场民容政])|县(?![级域])|自治州|自治县|盟|旗|经济特区|新区|合作区|示范区)"
)
_TRAILING_NOTE_RE = re.compile(r"\s*[（(][^（）()]{1,12}[）)]$")  # （试行）, (2019年修订)
# a signature block: the issuer's name on a short line of its own (no sentence punctuation), then the date
_SENTENCE_MARKS = set("。；，：！？;,:!?《》")
_SIGNATURE_MAX_CHARS = 30
_DATE_LINE_RE = re.compile(rf"^[（(]?\s*(?:{DATE_RE.pattern})\s*[）)]?$")
_LABEL_LINE_RE = re.compile(r"^(?:第[^\s]{1,10}[条章节编]|附件|附表|附录)")


def national_body(text: str, *, at_start: bool = False) -> str | None:
    """The first central body `text` names (国务院, 国家能源局, 生态环境部), dates ignored; with `at_start`, only
    one that opens the text (a title: 国务院关于…, 中华人民共和国…法)."""
    plain = DATE_RE.sub(" ", text).strip() if not at_start else text
    m = _NATIONAL_RE.match(plain) if at_start else _NATIONAL_RE.search(plain)
    return m.group(0) if m else None


def local_prefix(title: str) -> str | None:
    """The opening words of a title that read as a local division's name (莱芜市, 横琴粤澳深度合作区), known or
    not: a document that opens so is local, never nationwide law."""
    m = _LOCAL_PREFIX_RE.match(title.strip())
    return m.group(0) if m else None


def national_form(title: str) -> str | None:
    """'法' or '条例' when the title (a trailing （试行） aside) ends in a form only national acts take without
    a place name; the caller has checked that no place opens the title."""
    m = _NATIONAL_FORM_RE.search(_TRAILING_NOTE_RE.sub("", title.strip()))
    return m.group(0) if m else None


def signature_lines(text: str, max_lines: int = 4) -> list[str]:
    """The issuer lines of a signature block at the end of `text` (国家能源局 / 2023年5月1日): the last short
    lines without sentence punctuation, above and between date lines. A regulation that ends with its last
    article has none."""
    out: list[str] = []
    for raw in reversed(text.rstrip().splitlines()):
        line = raw.strip()
        if not line or _DATE_LINE_RE.match(line):
            continue
        if (
            len(line) > _SIGNATURE_MAX_CHARS
            or any(ch in _SENTENCE_MARKS for ch in line)
            or _LABEL_LINE_RE.match(line)
            or len(out) == max_lines
        ):
            break
        out.append(line)
    return out[::-1]


def infer_level(title: str, province: str | None) -> str | None:
    """A rough regulation level from the title; None when the title does not tell."""
    if province and province not in ("national", UNKNOWN_PROVINCE):
        return "local_regulation"
    if title.startswith("中华人民共和国") and title.endswith("法"):
        return "national_law"
    return None
