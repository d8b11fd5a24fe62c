"""The questions-answered index in the local SQLite index, beyond the port's contract (tests/contract): filters
through the chunks' restrict rows before top-k, replaced per chunk, removed with the chunk."""

from __future__ import annotations

import numpy as np
import pytest

from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.search_index import SqliteQuestionIndex
from regrag.domain.errors import InvalidInput
from regrag.domain.models import Chunk, DocumentMeta, Filters

DIM = 4


def unit(*values):
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def chunk(cid, province="gd", generation=1, effective_to=None):
    meta = DocumentMeta(
        doc_id=f"doc-{cid}",
        title="t",
        effective_date="2020-01-01",
        effective_to=effective_to,
        province=province,
        generation=generation,
    )
    return Chunk(cid, meta.doc_id, "article", "第一条", 0, 1, 1, (), 0, 1, "正文", "正文", meta)


@pytest.fixture
def db(tmp_path):
    index = SqliteIndex(tmp_path / "index.sqlite", DIM, "test-model")
    yield index
    index.close()


@pytest.fixture
def questions(db):
    return SqliteQuestionIndex(db)


def test_filters_apply_before_top_k(questions):
    q = unit(1, 0, 0, 0)
    questions.upsert(
        [
            chunk("sd-best", "sd"),
            chunk("sd-next", "sd"),
            chunk("gd-weak", "gd"),
            chunk("old", "gd", effective_to="2021-01-01"),
        ],
        [[unit(1, 0, 0, 0)], [unit(1, 0.1, 0, 0)], [unit(1, 3, 0, 0)], [unit(1, 0, 0, 0.01)]],
    )
    # k=1 among gd chunks in force in 2024: the weak gd question, not the better sd ones or the expired chunk
    assert [h.chunk_id for h in questions.search(q, Filters(province=("gd",), as_of="2024-01-01"), 1)] == ["gd-weak"]
    assert [h.chunk_id for h in questions.search(q, Filters(province=("gd",)), 1)] == ["old"]
    assert [h.chunk_id for h in questions.search(q, Filters(as_of="2022-06-01"), 2)] == ["sd-best", "sd-next"]
    assert [h.chunk_id for h in questions.search(q, Filters(province=("gd",), as_of="2020-06-01"), 1)] == ["old"]
    assert questions.search(q, Filters(province=("xz",)), 3) == []


def test_upsert_replaces_a_chunks_questions_and_an_empty_list_clears_them(questions, db):
    q = unit(1, 0, 0, 0)
    questions.upsert([chunk("a")], [[unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(0, 0, 0, 1)]])
    questions.upsert([chunk("a")], [[unit(1, 0, 0, 0)]])  # fewer questions now: nothing of the old three stays
    assert db._con().execute("SELECT count(*) FROM question_vec").fetchone() == (1,)
    assert questions.search(q, Filters(), 1)[0].score == pytest.approx(1.0)
    questions.upsert([chunk("a")], [[]])
    assert questions.search(q, Filters(), 1) == []


def test_questions_never_rewrite_the_restricts_of_a_chunk_the_index_already_has(db, questions):
    current = chunk("a", "gd")
    db.upsert_vectors([current], [unit(1, 0, 0, 0)])
    questions.upsert([chunk("a", "sd")], [[unit(1, 0, 0, 0)]])  # the message's metadata may be behind the store's
    assert [h.chunk_id for h in questions.search(unit(1, 0, 0, 0), Filters(province=("gd",)), 1)] == ["a"]
    assert questions.search(unit(1, 0, 0, 0), Filters(province=("sd",)), 1) == []


def test_delete_removes_the_questions_and_the_filter_row_once_no_leg_knows_the_chunk(db, questions):
    db.upsert_vectors([chunk("a")], [unit(1, 0, 0, 0)])
    questions.upsert([chunk("a"), chunk("b")], [[unit(1, 0, 0, 0)], [unit(0, 1, 0, 0)]])
    db.delete_vectors(["a"])
    con = db._con()
    assert con.execute("SELECT count(*) FROM restrict").fetchone() == (2,)  # a's questions still need its row
    questions.delete(["a", "b", "never-stored"])
    assert con.execute("SELECT count(*) FROM question_vec").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM restrict").fetchone() == (0,)
    assert questions.search(unit(1, 0, 0, 0), Filters(), 5) == []


def test_vectors_are_validated(questions):
    with pytest.raises(InvalidInput, match="dimensions"):
        questions.upsert([chunk("a")], [[np.ones(DIM + 1, dtype=np.float32)]])
    with pytest.raises(InvalidInput, match="non-finite"):
        questions.upsert([chunk("a")], [[np.full(DIM, np.nan, dtype=np.float32)]])
    with pytest.raises(InvalidInput, match="1 chunks but 2"):
        questions.upsert([chunk("a")], [[], []])


def test_an_index_without_questions_has_no_question_leg(db, questions):
    db.upsert_vectors([chunk("a")], [unit(1, 0, 0, 0)])
    snapshot = db.snapshot()
    assert snapshot.question_vectors.shape == (0, DIM) and snapshot.question_chunks.size == 0
    assert questions.search(unit(1, 0, 0, 0), Filters(), 3) == []


def test_with_question_search_off_the_vectors_are_kept_but_never_loaded(tmp_path):
    writer = SqliteIndex(tmp_path / "index.sqlite", DIM, "test-model")
    SqliteQuestionIndex(writer).upsert([chunk("a")], [[unit(1, 0, 0, 0)]])
    writer.close()
    reader = SqliteIndex(tmp_path / "index.sqlite", DIM, "test-model", search_questions=False)
    try:
        assert reader.snapshot().question_chunks.size == 0
        with pytest.raises(InvalidInput, match="without its question vectors"):
            SqliteQuestionIndex(reader).search(unit(1, 0, 0, 0), Filters(), 1)
        SqliteQuestionIndex(reader).delete(["a"])  # deletes still reach them
        assert reader._con().execute("SELECT count(*) FROM question_vec").fetchone() == (0,)
    finally:
        reader.close()
