"""Evaluation questions are not users' questions: they never reach the query log (which feedback export turns
into eval questions) nor the `answered` log line that monitoring counts."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.ops.evaluation import evaluate

from conftest import ingest_sample

QUESTIONS = [
    {"id": "q1", "question": "供电企业因为计划检修要停电，至少要提前几天通知用户？", "relevant": [
        {"doc_id": "nat-reg-0088", "article": "第二十八条", "grade": 3}]},
    {"id": "q2", "question": "量子计算机芯片的出口管制清单包括哪些型号？", "answerable": False},
]  # fmt: skip


class RecordingFeedback:
    """The services' own feedback store, with every query-log write recorded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.logged: list[str] = []

    def log_query(self, query_id: str, record: dict[str, Any]) -> None:
        self.logged.append(query_id)
        self.inner.log_query(query_id, record)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def services(hash_services):
    ingest_sample(hash_services, ["nat-reg-0088", "nat-law-0069"])
    return replace(hash_services, feedback=RecordingFeedback(hash_services.feedback))


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_evaluation_questions_are_neither_logged_nor_counted(services, caplog, mode):
    caplog.set_level(logging.INFO)
    report = evaluate(services, QUESTIONS, mode=mode)
    assert report["questions"] == 2 and report["errors"] == 0
    assert services.feedback.logged == []
    assert not [r for r in caplog.records if r.getMessage() == endpoints.ANSWERED_MESSAGE]


def test_a_users_question_is_logged_and_counted(services, caplog):
    """The same services do log a question that comes through the API: the test above is not vacuous."""
    caplog.set_level(logging.INFO)
    status, body = call(endpoints.query, services, {"question": QUESTIONS[0]["question"]})
    assert status == 200
    assert services.feedback.logged == [body["query_id"]]
    assert [r for r in caplog.records if r.getMessage() == endpoints.ANSWERED_MESSAGE]
