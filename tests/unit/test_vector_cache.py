"""The vector cache never hands a damaged vector to the index: an entry that fails its checksum is a miss (the
text is embedded again), and entries written before checksums are kept only when they are plausible."""

from __future__ import annotations

import sqlite3

import numpy as np

from regrag.adapters.local.embedders import HashEmbedder
from regrag.adapters.local.vector_cache import CachingEmbedder, SqliteVectorCache

TEXTS = ["第一条 为了规范供电", "第二条 供电企业应当", "第三条 用户应当安全用电"]


def _cached(tmp_path):
    cache = SqliteVectorCache(tmp_path / "cache.sqlite")
    embedder = CachingEmbedder(HashEmbedder(), cache)
    return cache, embedder, embedder.embed_documents(TEXTS)


def test_a_damaged_entry_is_embedded_again_and_rewritten(tmp_path):
    cache, embedder, first = _cached(tmp_path)
    con = sqlite3.connect(tmp_path / "cache.sqlite")
    (vec,) = con.execute("SELECT vec FROM vector LIMIT 1 OFFSET 1").fetchone()
    damaged = bytearray(vec)
    damaged[8] ^= 0x40
    con.execute("UPDATE vector SET vec=? WHERE vec=?", (bytes(damaged), vec))
    con.commit()
    assert [f.kind for f in cache.check_integrity()] == ["cache_checksum"]
    again = embedder.embed_documents(TEXTS)
    assert np.array_equal(first, again) and cache.damaged == 1
    assert cache.check_integrity() == []  # the entry was embedded again and stored whole


def test_entries_from_before_checksums_are_kept_when_plausible_and_sealed(tmp_path):
    cache, embedder, first = _cached(tmp_path)
    con = sqlite3.connect(tmp_path / "cache.sqlite")
    con.execute("UPDATE vector SET sum = NULL")
    rows = con.execute("SELECT hash, vec FROM vector").fetchall()
    garbled = np.frombuffer(rows[0][1], dtype="<f4") * 3  # no longer a unit vector
    con.execute("UPDATE vector SET vec=? WHERE hash=?", (garbled.astype("<f4").tobytes(), rows[0][0]))
    con.commit()
    before = cache.misses
    assert np.array_equal(embedder.embed_documents(TEXTS), first)
    assert cache.misses - before == 1  # the implausible one; the two others were used and sealed
    assert con.execute("SELECT count(*) FROM vector WHERE sum IS NULL").fetchone() == (0,)


def test_a_fixed_finding_removes_the_damaged_entries(tmp_path):
    cache, _, _ = _cached(tmp_path)
    con = sqlite3.connect(tmp_path / "cache.sqlite")
    con.execute("UPDATE vector SET sum = sum + 1 WHERE rowid = (SELECT min(rowid) FROM vector)")
    con.commit()
    findings = cache.check_integrity()
    assert cache.fix(findings) == findings and cache.check_integrity() == []
    assert con.execute("SELECT count(*) FROM vector").fetchone() == (2,)
