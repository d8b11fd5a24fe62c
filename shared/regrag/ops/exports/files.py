"""The export files themselves: an answer, a document's versions or a check report, as .docx or Markdown."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from regrag.domain.errors import InvalidInput, NotFound
from regrag.domain.ids import QUERY_ID_RE
from regrag.ops.exports.answer import answer_memo
from regrag.ops.exports.check_report import check_memo
from regrag.ops.exports.docx import to_docx
from regrag.ops.exports.markdown import to_markdown
from regrag.ops.exports.memo import Memo
from regrag.ops.exports.versions import versions_memo
from regrag.ops.watches import document_link
from regrag.services import Services
from regrag.views.documents import versions_view

DOCX = "docx"
MARKDOWN = "md"
MEDIA_TYPES = {
    DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    MARKDOWN: "text/markdown; charset=utf-8",
}


@dataclass(frozen=True)
class Export:
    data: bytes
    media_type: str
    filename: str  # ASCII, safe in any header; `title` is the Chinese one

    title: str = ""

    def disposition(self) -> str:
        """attachment; filename=…; filename*=UTF-8''… (RFC 6266: browsers save it under the Chinese title)."""
        suffix = self.filename.rsplit(".", 1)[-1]
        wanted = f"{self.title}.{suffix}" if self.title else self.filename
        return f"attachment; filename=\"{self.filename}\"; filename*=UTF-8''{quote(wanted, safe='')}"


# what a file name may not hold on Windows, macOS or Linux, and the length kept of a question in one
_UNSAFE_IN_NAMES = re.compile(r'[\\/:*?"<>|\x00-\x1f\s]+')
QUESTION_IN_NAME = 32


def render(memo: Memo, fmt: str, filename: str, title: str | None = None) -> Export:
    """The memo as a file; `title`: the name a browser saves it under (the memo's own title by default)."""
    if fmt == DOCX:
        data = to_docx(memo)
    elif fmt == MARKDOWN:
        data = to_markdown(memo).encode("utf-8")
    else:
        raise InvalidInput(f"format {fmt!r}: docx or md")
    return Export(data, MEDIA_TYPES[fmt], f"{filename}.{fmt}", title or memo.title)


def answer_title(memo: Memo, question: str) -> str:
    """法规检索结果-供电企业因计划检修需要停电: two answers saved the same day are told apart by their question."""
    words = _UNSAFE_IN_NAMES.sub("", question.strip().rstrip("？?。"))
    if len(words) > QUESTION_IN_NAME:
        # cut at the last clause that fits whole (会受到什么处 reads worse than a clause less), else at the length
        head = words[:QUESTION_IN_NAME]
        stop = max(head.rfind(mark) for mark in "，,；;：:")
        words = head[:stop] if stop >= QUESTION_IN_NAME // 2 else head
    return f"{memo.title}-{words}" if words else memo.title


def linker(page_url: str) -> Callable[[str, str | None], str]:
    return lambda doc_id, article: document_link(page_url, doc_id, article)


def answer_export(services: Services, query_id: str, fmt: str, page_url: str) -> Export:
    """GET /query/{query_id}/export: the answer as the query log kept it."""
    if not QUERY_ID_RE.match(query_id):
        raise InvalidInput(f"{query_id[:40]!r} is not a query id (32 hex digits, as /query returns it)")
    record = services.feedback.get_query(query_id) if services.feedback is not None else None
    if record is None:
        raise NotFound(f"unknown query_id {query_id}: export an answer this service gave", code="unknown_query")
    memo = answer_memo(record, query_id, linker(page_url))
    title = answer_title(memo, str(record.get("question") or ""))
    return render(memo, fmt, f"regrag-answer-{query_id[:12]}", title)


def versions_export(services: Services, doc_id: str, fmt: str, page_url: str) -> Export:
    """GET /documents/{doc_id}/versions/export."""
    view = versions_view(services.store, doc_id)
    return render(versions_memo(view, linker(page_url)), fmt, f"regrag-versions-{doc_id}")


def check_export(report: dict[str, Any], name: str, fmt: str, page_url: str) -> Export:
    """POST /check?format=…, regrag check --docx / --md."""
    return render(check_memo(report, name, linker(page_url)), fmt, "regrag-check")
