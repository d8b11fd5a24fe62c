import base64
import json

import numpy as np
import pytest

from regrag.domain.errors import InvalidInput
from regrag.domain.messages import (
    ChunksEmbedded,
    DocumentChunked,
    DocumentDeleted,
    covers_whole,
    encoded_size,
    message_from_json,
    split_for_publish,
)
from regrag.ingest.ingest import build_document
from regrag.ports import Blob

from conftest import SAMPLE


@pytest.fixture(scope="module")
def doc():
    data = (SAMPLE / "docs" / "nat-law-0077.md").read_bytes()
    return build_document("docs/nat-law-0077.md", Blob("docs/nat-law-0077.md", data, 3), None, 800)


def test_round_trip_through_json(doc):
    msg = DocumentChunked(doc.meta, doc.text, doc.chunks)
    again = message_from_json(json.loads(json.dumps(msg.to_json(), ensure_ascii=False)))
    assert again == msg
    vectors = tuple(np.random.default_rng(0).random((len(doc.chunks), 8), dtype=np.float32))
    emb = ChunksEmbedded(doc.meta, doc.text, doc.chunks, vectors, "m")
    back = message_from_json(json.loads(json.dumps(emb.to_json())))
    assert all(np.array_equal(a, b) for a, b in zip(back.vectors, vectors, strict=True))
    deleted = DocumentDeleted("d", "docs/d.md", 5, "c")
    assert message_from_json(deleted.to_json()) == deleted


def test_split_keeps_every_chunk_once_and_each_part_under_the_limit(doc):
    msg = DocumentChunked(doc.meta, doc.text, doc.chunks)
    limit = encoded_size(msg) // 3
    pieces = split_for_publish(msg, max_bytes=limit)
    assert len(pieces) >= 4
    assert all(encoded_size(p) <= limit for p in pieces)
    assert [c.id for p in pieces for c in p.chunks] == [c.id for c in doc.chunks]
    assert {p.part for p in pieces} == set(range(pieces[0].parts))


def test_unsplittable_message_is_a_permanent_error(doc):
    msg = DocumentChunked(doc.meta, doc.text, doc.chunks[:1])
    with pytest.raises(InvalidInput, match="does not fit"):
        split_for_publish(msg, max_bytes=100)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"kind": "Nope"}, "unknown message kind"),
        ([], "unknown message kind"),
        ({"kind": "DocumentChunked", "schema_version": 99}, "unsupported schema_version"),
        ({"kind": "DocumentChunked", "schema_version": 1}, "missing fields"),
        ({"kind": "DocumentDeleted", "schema_version": 1, "doc_id": "x", "generation": "abc"}, "malformed"),
    ],
)
def test_malformed_messages(payload, message):
    with pytest.raises(InvalidInput, match=message):
        message_from_json(payload)


def test_vector_count_mismatch(doc):
    emb = ChunksEmbedded(doc.meta, doc.text, doc.chunks[:2], (np.zeros(3, np.float32),) * 2, "m").to_json()
    emb["vectors"] = emb["vectors"][:1]
    with pytest.raises(InvalidInput, match="2 chunks but 1 vectors"):
        message_from_json(emb)
    assert base64.b64decode(emb["vectors"][0])  # vectors travel as base64 float32


def test_parts_split_again_downstream_still_add_up_to_the_whole(doc):
    """Ingest splits a document in 2; embed's vectors make the first half too large again: parts 0-1 of 4 and
    1 of 2 then carry every chunk, and only their spans (not their count) say so."""
    whole = DocumentChunked(doc.meta, doc.text, doc.chunks)
    halves = split_for_publish(whole, max_bytes=encoded_size(whole) * 7 // 10)  # each carries the whole text
    assert [(p.part, p.parts) for p in halves] == [(0, 2), (1, 2)]
    first = split_for_publish(halves[0], max_bytes=encoded_size(halves[0]) * 95 // 100)
    numbering = [(p.part, p.parts) for p in [*first, halves[1]]]
    assert numbering == [(0, 4), (1, 4), (1, 2)]
    assert covers_whole(numbering) and covers_whole([*numbering, (1, 4)])  # a redelivered part changes nothing
    assert not covers_whole([(0, 4), (1, 2)]) and not covers_whole([(1, 4), (1, 2)]) and not covers_whole([])
    assert covers_whole([(0, 1)])
