"""What `regrag doctor` checks in the local index, and what the index fixes by itself (`regrag repair`).

Checked, each finding naming its documents (regrag.domain.integrity says what each remedy means):
- the file: SQLite's own integrity check (deep);
- every document written whole: marked complete at its stored generation, every chunk with its vector and its
  terms, no chunk of an older generation left, every part arrived;
- every row's checksum (deep): documents, chunks, vectors, term counts;
- version links: a `superseded_by` names a document that exists and names it back (else the older version is
  hidden behind a successor that is gone); a `supersedes` naming a document not stored is a warning (the older
  version may simply not be ingested yet);
- the search filters of every chunk (restricts) agree with its document's dates (deep): a version switch that
  did not finish leaves the older version in force beside the newer;
- rows nothing refers to (chunks of no document, vectors or terms of no chunk) and parts kept for a generation
  that is no longer coming;
- the saved search snapshot of the current version against its recorded checksums (deep).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from regrag.adapters.local import snapshot_files
from regrag.adapters.local.index_file import UNWRITTEN_SQL, chunk_sum, document_sum, terms_sum, vector_sum
from regrag.domain import integrity as I
from regrag.domain.integrity import Finding

if TYPE_CHECKING:
    from regrag.adapters.local.chunk_store import SqliteIndex


def document_unwritten(con: Any, doc_id: str) -> bool:
    """Whether the stored generation of `doc_id` lacks a vector or terms, or older chunks stayed (one document's
    share of UNWRITTEN_SQL, through the indexes on doc_id)."""
    row = con.execute(
        "SELECT count(*), sum(v.rowid IS NULL), sum(l.rowid IS NULL), sum(c.generation < d.generation) "
        "FROM chunk c JOIN document d ON d.doc_id = c.doc_id "
        "LEFT JOIN vec_store v ON v.rowid = c.rowid LEFT JOIN lex l ON l.rowid = c.rowid WHERE c.doc_id = ?",
        (doc_id,),
    ).fetchone()
    return bool(not row[0] or row[1] or row[2] or row[3])


def damaged_rows(con: Any, doc_id: str | None = None) -> list[Finding]:
    """Documents with a row that fails its checksum (all of them, or `doc_id`'s), one finding per document; and
    vector or term rows of no known chunk that fail theirs."""
    where, args = ("WHERE c.doc_id = ?", (doc_id,)) if doc_id else ("", ())
    bad: dict[str, list[str]] = defaultdict(list)
    docs = con.execute(
        "SELECT doc_id, meta_json, text, sum FROM document" + (" WHERE doc_id = ?" if doc_id else ""), args
    )
    for d, meta_json, text, sum_ in docs:
        if sum_ is not None and document_sum(meta_json, text) != sum_:
            bad[d].append("its metadata or text")
    chunks = con.execute(f"SELECT c.id, c.doc_id, c.generation, c.data_json, c.sum FROM chunk c {where}", args)
    for cid, d, generation, data, sum_ in chunks:
        if sum_ is not None and chunk_sum(cid, d, generation, data) != sum_:
            bad[d].append(f"chunk {cid}")
    vectors = con.execute(
        f"SELECT k.id, c.doc_id, v.emb, v.sum FROM vec_store v JOIN chunk_key k ON k.rowid = v.rowid "
        f"LEFT JOIN chunk c ON c.rowid = v.rowid {where}",
        args,
    )
    for cid, d, emb, sum_ in vectors:
        if sum_ is not None and vector_sum(emb) != sum_:
            bad[d or ""].append(f"the vector of chunk {cid}")
    terms = con.execute(
        f"SELECT k.id, c.doc_id, l.length, l.term_ids, l.counts, l.sum FROM lex l "
        f"JOIN chunk_key k ON k.rowid = l.rowid LEFT JOIN chunk c ON c.rowid = l.rowid {where}",
        args,
    )
    for cid, d, length, ids, counts, sum_ in terms:
        if sum_ is not None and terms_sum(length, ids, counts) != sum_:
            bad[d or ""].append(f"the terms of chunk {cid}")
    findings = []
    for d, what in sorted(bad.items()):
        shown = ", ".join(what[:3]) + (f" and {len(what) - 3} more" if len(what) > 3 else "")
        if d:
            detail = f"{len(what)} row(s) fail their checksum ({shown}): written again from the bucket"
            findings.append(Finding("damaged_rows", d, detail, I.REINGEST, (d,)))
        else:
            detail = f"{len(what)} vector or term row(s) of no chunk fail their checksum ({shown})"
            findings.append(Finding("damaged_rows", "(no document)", detail, I.STORE))
    return findings


def check(index: SqliteIndex, deep: bool) -> list[Finding]:
    con = index._con()
    findings: list[Finding] = []
    if deep:
        problems = [r[0] for r in con.execute("PRAGMA integrity_check(20)").fetchall()]
        if problems != ["ok"]:
            detail = f"SQLite's integrity check failed: {'; '.join(problems[:3])}"
            return [Finding("damaged_file", str(index.path), detail, I.REBUILD)]
    findings += _unwritten(con)
    findings += _links(con)
    findings += _orphans(con)
    findings += _staged(con)
    if deep:
        findings += damaged_rows(con)
        findings += _restricts(index, con)
        findings += _snapshot(index)
    seen = sorted(index.damage_seen)
    if seen and not deep:
        detail = f"{len(seen)} row(s) failed their checksum when read (e.g. {seen[0][0]} {seen[0][1]}) and were skipped"
        findings.append(Finding("damaged_rows", str(index.path), detail, I.REINGEST))
    return findings


def _unwritten(con: Any) -> list[Finding]:
    rows = con.execute(
        "SELECT d.doc_id, d.generation, d.complete, "
        "(SELECT count(*) FROM chunk c WHERE c.doc_id = d.doc_id AND c.generation = d.generation), "
        "(SELECT count(*) FROM chunk c WHERE c.doc_id = d.doc_id AND c.generation = d.generation "
        " AND NOT EXISTS (SELECT 1 FROM vec_store v WHERE v.rowid = c.rowid)), "
        "(SELECT count(*) FROM chunk c WHERE c.doc_id = d.doc_id AND c.generation = d.generation "
        " AND NOT EXISTS (SELECT 1 FROM lex l WHERE l.rowid = c.rowid)), "
        "(SELECT count(*) FROM chunk c WHERE c.doc_id = d.doc_id AND c.generation < d.generation) "
        f"FROM document d WHERE d.complete IS NOT d.generation OR d.doc_id IN ({UNWRITTEN_SQL}) ORDER BY d.doc_id"
    ).fetchall()
    findings = []
    for doc_id, generation, complete, chunks, no_vector, no_terms, older in rows:
        what = []
        if no_vector:
            what.append(f"{no_vector} of {chunks} chunks have no vector")
        if no_terms:
            what.append(f"{no_terms} of {chunks} chunks have no search terms")
        if older:
            what.append(f"{older} chunks of an older version are still stored")
        if not chunks:
            what.append("no chunks")
        if complete != generation and not what:
            what.append("its write did not finish (no completion mark)")
        elif complete != generation:
            what.append("no completion mark")
        detail = "not written whole: " + ", ".join(what) + " (an interrupted ingest); it is ingested again"
        findings.append(Finding("incomplete_document", doc_id, detail, I.REINGEST, (doc_id,)))
    return findings


def _links(con: Any) -> list[Finding]:
    docs = {d: json.loads(m) for d, m in con.execute("SELECT doc_id, meta_json FROM document")}
    findings = []
    for doc_id, meta in sorted(docs.items()):
        newer = meta.get("superseded_by")
        if newer and (newer not in docs or docs[newer].get("supersedes") != doc_id):
            why = "is not stored" if newer not in docs else f"does not name it ({docs[newer].get('supersedes')!r})"
            detail = (
                f"marked superseded by {newer}, which {why}: the version is hidden from answers about today "
                "(an interrupted delete or relink); ingested again, it is back in force"
            )
            findings.append(Finding("dangling_link", doc_id, detail, I.REINGEST, (doc_id,)))
        older = meta.get("supersedes")
        if older and older not in docs:
            detail = f"names {older} as the version it replaces, which is not stored (not ingested yet?)"
            findings.append(Finding("pending_link", doc_id, detail, I.NONE, (doc_id,), severity=I.WARNING))
    return findings


def _orphans(con: Any) -> list[Finding]:
    findings = []
    (chunks,) = con.execute(
        "SELECT count(*) FROM chunk c WHERE NOT EXISTS (SELECT 1 FROM document d WHERE d.doc_id = c.doc_id)"
    ).fetchone()
    if chunks:
        detail = f"{chunks} chunk row(s) of no stored document (left by an interrupted delete): removed"
        findings.append(Finding("orphan_rows", "chunk", detail, I.STORE))
    for table in ("vec_store", "lex", "restrict"):
        (count,) = con.execute(
            f"SELECT count(*) FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.rowid = t.rowid)"
        ).fetchone()
        if count:
            detail = f"{count} {table} row(s) of no stored chunk (searchable, but never quotable): removed"
            findings.append(Finding("orphan_rows", table, detail, I.STORE))
    return findings


def _staged(con: Any) -> list[Finding]:
    rows = con.execute(
        "SELECT s.doc_id, s.generation, count(*), d.generation, d.complete FROM staged_part s "
        "LEFT JOIN document d ON d.doc_id = s.doc_id GROUP BY s.doc_id, s.generation ORDER BY s.doc_id"
    ).fetchall()
    findings = []
    for doc_id, generation, arrived, stored, complete in rows:
        if stored is not None and (generation < stored or (generation == stored and complete == stored)):
            detail = f"{arrived} kept part(s) of generation {generation}, which is no longer coming: removed"
            findings.append(Finding("stale_parts", doc_id, detail, I.STORE, (doc_id,), data={"generation": generation}))
        else:
            detail = f"{arrived} part(s) of generation {generation} arrived; the document waits for the rest"
            findings.append(Finding("waiting_parts", doc_id, detail, I.REINGEST, (doc_id,), severity=I.WARNING))
    return findings


def _restricts(index: SqliteIndex, con: Any) -> list[Finding]:
    from regrag.adapters.local.search_store import restricts

    metas = {m.doc_id: m for m in index.list_documents()}
    rows = con.execute(
        "SELECT DISTINCT c.doc_id, r.corpus, r.province, r.asset, r.doc_class, r.level, r.doc_id, r.eff, r.eff_to "
        "FROM restrict r JOIN chunk c ON c.rowid = r.rowid"
    ).fetchall()
    stale: set[str] = set()
    for doc_id, *values in rows:
        meta = metas.get(doc_id)
        if meta is None:
            continue
        want = restricts(meta)
        keys = ("corpus", "province", "asset", "doc_class", "level", "doc_id", "eff", "eff_to")
        if tuple(want[k] for k in keys) != tuple(values):
            stale.add(doc_id)
    findings = []
    for doc_id in sorted(stale):
        detail = (
            "the search filters of its chunks disagree with its metadata (dates, province…): answers about a day "
            "may quote it out of force, or miss it (an interrupted version switch); ingested again"
        )
        findings.append(Finding("stale_filters", doc_id, detail, I.REINGEST, (doc_id,)))
    return findings


def _snapshot(index: SqliteIndex) -> list[Finding]:
    problem = snapshot_files.verify(index._files, index.index_version())
    if problem is None:
        return []
    return [Finding("snapshot_checksum", str(index._files), problem + ": removed, rebuilt by the next search", I.STORE)]


def fix(index: SqliteIndex, findings: Sequence[Finding]) -> list[Finding]:
    fixed = []
    for finding in findings:
        if finding.remedy != I.STORE:
            continue
        if finding.kind == "orphan_rows":
            _remove_orphans(index, finding.subject)
        elif finding.kind == "damaged_rows":  # vector or term rows of no chunk
            _remove_orphans(index, "vec_store")
            _remove_orphans(index, "lex")
            _remove_damaged_unowned(index)
        elif finding.kind == "stale_parts":
            index.clear(finding.subject, int(finding.data["generation"]))
        elif finding.kind == "snapshot_checksum":
            shutil.rmtree(index._files, ignore_errors=True)
        else:
            continue
        fixed.append(finding)
    return fixed


def _remove_orphans(index: SqliteIndex, table: str) -> None:
    with index._writing() as con:
        if table == "chunk":
            con.execute("DELETE FROM chunk WHERE NOT EXISTS (SELECT 1 FROM document d WHERE d.doc_id = chunk.doc_id)")
            return
        con.execute(f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.rowid = {table}.rowid)")


def _remove_damaged_unowned(index: SqliteIndex) -> None:
    with index._writing() as con:
        for rowid, emb, sum_ in con.execute("SELECT rowid, emb, sum FROM vec_store").fetchall():
            if sum_ is not None and vector_sum(emb) != sum_:
                con.execute("DELETE FROM vec_store WHERE rowid=?", (rowid,))
        for rowid, length, ids, counts, sum_ in con.execute(
            "SELECT rowid, length, term_ids, counts, sum FROM lex"
        ).fetchall():
            if sum_ is not None and terms_sum(length, ids, counts) != sum_:
                con.execute("DELETE FROM lex WHERE rowid=?", (rowid,))
