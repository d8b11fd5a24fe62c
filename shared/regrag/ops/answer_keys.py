"""What the user reads, measured: for question sets with `answer_keys` (shared/eval/README.md, quotes-dev), does
the first quote show the answer, does any quote, and are the quotes whole and labelled.

- first key / some key: a quote contains one of the question's answer keys (short verbatim strings of the gold
  article, each inside one clause or item), compared after NFKC with whitespace removed;
- fragments: a quoted span that ends in ： (a lead-in without its items) or that starts with an item marker with
  no lead-in. A span that opens with its article label (第二十八条……) is read from after the label, so the label
  cannot hide an orphan item;
- unlabelled: a bullet whose span and citation marker name no article (第X条).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from regrag.text.legal import CROSS_REF_RE, ITEM_RE, QUOTE_OPENING_RE


def normalised(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def holds_key(span: str, keys: Sequence[str]) -> bool:
    text = normalised(span)
    return any(normalised(k) in text for k in keys)


def is_fragment(span: str) -> bool:
    text = span.strip()
    if text.endswith(("：", ":")):
        return True
    # a quote's label is followed by text or by ……, not always by a space: ARTICLE_RE (a label in a document)
    # did not match 第十条……(一)…, so the label hid the orphan item it should have exposed
    opening = QUOTE_OPENING_RE.match(text)
    return bool(ITEM_RE.match(text[opening.end() :] if opening else text))


def labelled(bullet: dict[str, Any]) -> bool:
    return bool(CROSS_REF_RE.search(bullet["span"]) or CROSS_REF_RE.search(bullet["citation"].get("marker", "")))


def key_row(q: dict[str, Any], resp: dict[str, Any]) -> dict[str, Any]:
    """One question's reading figures (only for questions with answer_keys)."""
    keys = q["answer_keys"]
    bullets = resp["bullets"]
    gold = {(g["doc_id"], g["article"]) for g in q.get("gold") or q.get("relevant") or []}
    first: dict[str, Any] | None = bullets[0] if bullets else None
    return {
        "first_key": first is not None and holds_key(first["span"], keys),
        "some_key": any(holds_key(b["span"], keys) for b in bullets),
        "first_gold": first is not None and (first["citation"]["doc_id"], first["citation"]["article"]) in gold,
        "spans": len(bullets),
        "fragments": sum(is_fragment(b["span"]) for b in bullets),
        "unlabelled": sum(not labelled(b) for b in bullets),
        "first_chars": len(first["span"]) if first else None,
        "level": resp.get("confidence", {}).get("level"),
    }


def key_metrics(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The set's reading figures: shares of questions, and counts over every bullet."""
    keyed = [r["keys"] for r in rows if "keys" in r]
    if not keyed:
        return {}
    n = len(keyed)
    answered = [r for r in rows if "keys" in r and not r["abstained"]]
    lengths = sorted(k["first_chars"] for k in keyed if k["first_chars"] is not None)
    return {
        "first_quote_key": sum(k["first_key"] for k in keyed) / n,
        "some_quote_key": sum(k["some_key"] for k in keyed) / n,
        "first_quote_gold": sum(k["first_gold"] for k in keyed) / n,
        "keyed_abstained": (n - len(answered)) / n,
        "quoted_spans": float(sum(k["spans"] for k in keyed)),
        "fragments": float(sum(k["fragments"] for k in keyed)),
        "unlabelled_bullets": float(sum(k["unlabelled"] for k in keyed)),
        "first_quote_median_chars": float(lengths[len(lengths) // 2]) if lengths else float("nan"),
    }


def calibration(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per confidence level: how many answers, and how often their first quote shows the answer."""
    out: dict[str, dict[str, Any]] = {}
    for level in ("high", "medium", "low"):
        subset = [r["keys"] for r in rows if "keys" in r and r["keys"]["level"] == level and not r["abstained"]]
        if subset:
            out[level] = {
                "n": len(subset),
                "first_quote_key": round(sum(k["first_key"] for k in subset) / len(subset), 3),
            }
    return out
