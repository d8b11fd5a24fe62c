"""The search snapshot kept on disk: a new process maps the saved arrays instead of rebuilding them, finds what
a rebuild finds, and never uses the files of another index version or other settings."""

from __future__ import annotations

import numpy as np
import pytest

from regrag.adapters.local import snapshot_files
from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.search_index import SqliteLexicalIndex, SqliteVectorIndex
from regrag.domain.bm25 import Bm25Params
from regrag.domain.models import Chunk, DocumentMeta, Filters

DIM = 8


def _index(path, **kwargs):
    return SqliteIndex(path, DIM, "test-model", snapshot_files_min_chunks=0, **kwargs)


def _fill(db: SqliteIndex, n: int = 40) -> list[Chunk]:
    rng = np.random.default_rng(5)
    chunks = []
    for i in range(n):
        meta = DocumentMeta(doc_id=f"d{i // 4}", title=f"条例{i // 4}", corpus=("a", "b")[i % 2], province="gd")
        text = f"第{i}条 并网 电网{i % 3}"
        chunks.append(
            Chunk(f"c{i:03d}", meta.doc_id, "article", f"第{i}条", 0, 1, i, (), 0, len(text), text, text, meta)
        )
    vectors = [v / np.linalg.norm(v) for v in rng.standard_normal((n, DIM)).astype(np.float32)]
    SqliteVectorIndex(db).upsert(chunks, vectors)
    SqliteLexicalIndex(db).upsert(chunks, [["并网", f"电网{i % 3}"] for i in range(n)], [["条例"]] * n)
    return chunks


def _searches(db: SqliteIndex) -> list:
    query = np.random.default_rng(8).standard_normal(DIM).astype(np.float32)
    out = []
    for filters in (Filters(), Filters(corpus=("b",)), Filters(corpus=("a",), province=("gd",))):
        out.append(db.search_vectors(query, filters, 7))
        out.append(db.search_lexical(["并网", "电网1"], filters, 7))
    return out


def test_a_new_process_maps_the_saved_snapshot_and_finds_the_same(tmp_path):
    path = tmp_path / "index.sqlite"
    writer = _index(path)
    _fill(writer)
    built = _searches(writer)  # builds the snapshot and saves it
    saved = snapshot_files.folder_for(path) / f"v{writer.index_version()}"
    assert (saved / "meta.json").exists()

    reader = _index(path)
    assert _searches(reader) == built
    assert isinstance(reader.snapshot().vectors, np.memmap)  # mapped, not rebuilt


def test_a_write_makes_the_saved_snapshot_stale_and_the_next_build_removes_it(tmp_path):
    path = tmp_path / "index.sqlite"
    db = _index(path)
    chunks = _fill(db)
    _searches(db)
    old = db.index_version()
    SqliteVectorIndex(db).delete([chunks[0].id])
    assert not any(h.chunk_id == chunks[0].id for h in db.search_vectors(np.ones(DIM, np.float32), Filters(), 40))
    folders = sorted(p.name for p in snapshot_files.folder_for(path).iterdir())
    assert folders == [f"v{db.index_version()}"] and db.index_version() > old


@pytest.mark.parametrize(
    "other",
    [
        {"bm25": Bm25Params(k1=1.2)},
        {"search_questions": False},
    ],
)
def test_files_saved_with_other_settings_are_not_used(tmp_path, other):
    path = tmp_path / "index.sqlite"
    _fill(_index(path))
    _searches(_index(path))
    reader = _index(path, **other)
    assert not isinstance(reader.snapshot().vectors, np.memmap)  # rebuilt for its own settings
    # ... and saved in their place, so that the next process with these settings maps it
    assert isinstance(_index(path, **other).snapshot().vectors, np.memmap)
    assert [p.name for p in snapshot_files.folder_for(path).iterdir()] == [f"v{reader.index_version()}"]


def test_a_damaged_folder_is_rebuilt_and_small_indexes_keep_no_files(tmp_path):
    path = tmp_path / "index.sqlite"
    db = _index(path)
    _fill(db)
    built = _searches(db)
    folder = snapshot_files.folder_for(path) / f"v{db.index_version()}"
    (folder / "vectors.npy").write_bytes(b"not numpy")
    assert _searches(_index(path)) == built

    small = SqliteIndex(tmp_path / "small.sqlite", DIM, "test-model", snapshot_files_min_chunks=1000)
    _fill(small)
    _searches(small)
    assert not snapshot_files.folder_for(tmp_path / "small.sqlite").exists()


def test_the_process_that_saved_the_snapshot_then_searches_the_saved_files(tmp_path):
    """Its own arrays are freed for the mapped files (page cache: evictable, shared with other processes)."""
    path = tmp_path / "index.sqlite"
    db = _index(path)
    _fill(db)
    built = _searches(db)
    assert isinstance(db.snapshot().vectors, np.memmap)
    assert _searches(db) == built


def test_prepare_search_saves_the_snapshot_only_for_an_index_that_keeps_one(tmp_path):
    path = tmp_path / "index.sqlite"
    db = _index(path)
    _fill(db)
    db.prepare_search()  # what `regrag ingest` does after its writes
    assert (snapshot_files.folder_for(path) / f"v{db.index_version()}" / "meta.json").exists()
    assert isinstance(_index(path).snapshot().vectors, np.memmap)  # the next server maps it: nothing to build

    for name, threshold in (("small.sqlite", 41), ("never.sqlite", None)):
        other = SqliteIndex(tmp_path / name, DIM, "test-model", snapshot_files_min_chunks=threshold)
        _fill(other)  # 40 chunks: under both
        other.prepare_search()
        assert not snapshot_files.folder_for(tmp_path / name).exists()
        assert other._snapshot is None  # nothing built either: the preparing process would throw it away


@pytest.mark.parametrize("damaged", ["vectors.npy", "idf.npy", "chunk_ids.txt", "posting_rows.npy"])
def test_a_flipped_byte_in_any_saved_file_is_found_and_the_folder_rebuilt(tmp_path, damaged):
    """A file of the right size and format with one byte changed would load and search: its checksum does not
    match, so it is removed and rebuilt, never mapped."""
    path = tmp_path / "index.sqlite"
    db = _index(path)
    _fill(db)
    built = _searches(db)
    folder = snapshot_files.folder_for(path) / f"v{db.index_version()}"
    target = folder / damaged
    raw = bytearray(target.read_bytes())
    raw[len(raw) - 3] ^= 0x01
    target.write_bytes(bytes(raw))
    problem = snapshot_files.verify(snapshot_files.folder_for(path), db.index_version())
    assert problem is not None and damaged in problem
    reader = _index(path)
    assert _searches(reader) == built  # rebuilt from the index, then saved again whole
    assert snapshot_files.verify(snapshot_files.folder_for(path), db.index_version()) is None


def test_a_damaged_meta_json_that_still_parses_is_found(tmp_path):
    path = tmp_path / "index.sqlite"
    db = _index(path)
    _fill(db)
    built = _searches(db)
    meta = snapshot_files.folder_for(path) / f"v{db.index_version()}" / "meta.json"
    meta.write_text(meta.read_text(encoding="utf-8").replace('"并网": ', '"并网": 1', 1), encoding="utf-8")
    assert "meta.json does not match" in str(snapshot_files.verify(snapshot_files.folder_for(path), db.index_version()))
    assert _searches(_index(path)) == built
