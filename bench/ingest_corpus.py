"""Ingest the whole corpus through the real path (bucket → ingest → bus → embed → upsert) and report figures.

    python bench/ingest_corpus.py [--corpus ../shared/corpus] [--embedder e5|hash] [--vector-cache PATH]

Prints documents/s, chunks, wall time, peak RSS, and the per-document article-chunk count against the
manifest's `articles`. With e5 and an empty cache this embeds ~26.5 k chunks (about 30 min on 2 cores);
`--vector-cache` reuses vectors cached by (model, content hash), so a second run measures everything else.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import DEFAULT_CORPUS, peak_rss_mb
from regrag.config import Settings
from regrag.entrypoints import handlers
from regrag.entrypoints.cli.ingest import discover
from regrag.ingest.ingest import SIDECAR_SUFFIX
from regrag.text.chunking import KIND_ARTICLE
from regrag.wiring import build_services


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--embedder", default="e5", choices=("e5", "hash"))
    ap.add_argument("--vector-cache", type=Path)
    ap.add_argument("--data-dir", type=Path, help="keep the index here (default: a temporary folder)")
    args = ap.parse_args()

    data = args.data_dir or Path(tempfile.mkdtemp(prefix="regrag-bench-"))
    overrides = {"data_dir": data, "embedder": args.embedder}
    if args.vector_cache:
        overrides["vector_cache"] = args.vector_cache
    services = build_services(Settings.from_env({"LOG_LEVEL": "WARNING"}, **overrides))
    uploads = list(discover([str(args.corpus)], None))
    manifest = {u.doc_id: u.sidecar for u in uploads if u.sidecar and u.doc_id}
    expected = {}
    for line in (args.corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            expected[rec["doc_id"]] = rec["articles"]

    started = time.perf_counter()
    failed = 0
    for up in uploads:
        if up.sidecar:
            services.blobs.write(up.name + SIDECAR_SUFFIX, up.sidecar)
        services.blobs.write(up.name, up.path.read_bytes())
        if handlers.ingest_name(services, up.name) is None:
            failed += 1
    wall = time.perf_counter() - started

    stats = services.store.stats()
    diffs = []
    for doc_id, want in expected.items():
        chunks = services.store.document_chunks(doc_id)
        got = len({(c.article, c.ordinal) for c in chunks if c.kind == KIND_ARTICLE})
        if got != want:
            diffs.append((doc_id, want, got))
    vectors = services.caches["document_vectors"]()
    print(f"corpus            {args.corpus} ({len(manifest)} documents)")
    print(f"embedder          {services.embedder.model_id}")
    dead = len(services.bus.dead_letters) if services.bus is not None else 0
    print(f"documents         {stats['documents']} ingested, {failed} failed, {dead} dead letters")
    print(f"chunks            {stats['chunks']}")
    print(f"wall time         {wall:.1f} s  ({len(uploads) / wall:.1f} docs/s, {stats['chunks'] / wall:.0f} chunks/s)")
    print(f"vector cache      {vectors['hits']} hits, {vectors['misses']} misses")
    print(f"peak RSS          {peak_rss_mb():.0f} MB")
    print(f"article chunks vs manifest: {len(expected) - len(diffs)}/{len(expected)} documents equal")
    for doc_id, want, got in diffs:
        print(f"  {doc_id}: manifest {want}, chunks {got}")
    print(f"index             {data}")


if __name__ == "__main__":
    main()
