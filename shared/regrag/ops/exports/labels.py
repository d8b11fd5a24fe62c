"""The Chinese words an export uses for codes: filter values (the same labels as the page's VOCAB in web/app.js;
tests/unit/test_exports.py checks they agree), version statuses and the as-of day's sources."""

from __future__ import annotations

from typing import Any

from regrag.text.inference import PROVINCE_NAMES

FILTER_VALUES: dict[str, dict[str, str]] = {
    "province": PROVINCE_NAMES,
    "asset": {
        "solar": "光伏", "wind": "风电", "coal": "煤炭", "hydro": "水电", "nuclear": "核电", "grid": "电网",
        "general": "综合",
    },
    "doc_class": {
        "grid": "电网与供用电", "permit": "行政许可", "technical": "技术标准", "energy": "能源综合",
        "environment": "生态环境", "land": "土地", "safety": "安全生产", "general": "其他",
    },
    "regulation_level": {
        "national_law": "法律", "administrative_regulation": "行政法规", "departmental_rule": "部门规章",
        "local_regulation": "地方性法规", "unknown": "未标注",
    },
}  # fmt: skip
FILTER_NAMES = {
    "province": "地区",
    "asset": "能源类型",
    "doc_class": "文件类别",
    "regulation_level": "效力级别",
    "corpus": "语料库",
    "doc_id": "文件",
}

VERSION_STATUS = {
    "in_force": "现行有效",
    "upcoming": "现行有效；新版本已公布、尚未施行",
    "superseded_since": "当时有效，此后已被新版本取代",
    "superseded": "已被新版本取代",
    "not_yet_in_force": "尚未施行",
}

AS_OF_SOURCES = {"filter": "筛选条件", "question": "问题中的日期", "revision": "问题所指的修订前版本", "today": "今天"}


def filter_summary(filters: dict[str, Any]) -> str:
    """地区：山东、全国；时点 2024-01-01 … or 无."""
    parts = []
    for key, name in FILTER_NAMES.items():
        values = filters.get(key) or []
        if values:
            words = FILTER_VALUES.get(key, {})
            parts.append(f"{name}：{'、'.join(words.get(v, v) for v in values)}")
    if filters.get("date_from") or filters.get("date_to"):
        parts.append(f"生效日期：{filters.get('date_from') or '…'} 至 {filters.get('date_to') or '…'}")
    if filters.get("include_superseded"):
        parts.append("含已失效版本")
    return "；".join(parts) or "无"


def version_words(citation: dict[str, Any]) -> str:
    """The cited version's status in words, with the successor's dates when a newer version is known."""
    status = str(citation.get("version_status") or "in_force")
    words = VERSION_STATUS.get(status, status)
    successor = citation.get("successor") or {}
    if successor and status in ("superseded", "superseded_since", "upcoming"):
        dates = f"施行：{successor.get('effective_date') or '日期不详'}"
        if successor.get("promulgated") and successor.get("promulgated") != successor.get("effective_date"):
            dates = f"公布：{successor['promulgated']}，{dates}"
        words += f"（新版本《{successor.get('title', '')}》，{dates}）"
    return words
