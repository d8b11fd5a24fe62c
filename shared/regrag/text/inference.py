"""Metadata inferred from a regulation's own text, used only where no sidecar or object metadata says more."""

from __future__ import annotations

# ISO 3166-2:CN subdivision codes, lower-cased: the same codes the corpus uses (gd 广东, ha 河南, …).
PROVINCES = {
    "北京": "bj", "天津": "tj", "河北": "he", "山西": "sx", "内蒙古": "nm", "辽宁": "ln", "吉林": "jl",
    "黑龙江": "hl", "上海": "sh", "江苏": "js", "浙江": "zj", "安徽": "ah", "福建": "fj", "江西": "jx",
    "山东": "sd", "河南": "ha", "湖北": "hb", "湖南": "hn", "广东": "gd", "广西": "gx", "海南": "hi",
    "重庆": "cq", "四川": "sc", "贵州": "gz", "云南": "yn", "西藏": "xz", "陕西": "sn", "甘肃": "gs",
    "青海": "qh", "宁夏": "nx", "新疆": "xj",
}  # fmt: skip
PROVINCE_NAMES = {code: name for name, code in PROVINCES.items()} | {"national": "全国"}


def infer_province(title: str) -> str | None:
    """'广东省…条例' → 'gd'; a national law (中华人民共和国…) → 'national'; else None."""
    if title.startswith("中华人民共和国") or title.startswith("国务院"):
        return "national"
    for name, code in PROVINCES.items():
        if title.startswith(name):
            return code
    return None


def infer_level(title: str, province: str | None) -> str | None:
    """A rough regulation level from the title; None when the title does not tell."""
    if province and province != "national":
        return "local_regulation"
    if title.startswith("中华人民共和国") and title.endswith("法"):
        return "national_law"
    return None
