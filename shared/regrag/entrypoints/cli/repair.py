"""`regrag repair [DOC_ID…]`: put right what `regrag doctor` finds, from the bucket (the source of truth).

In order (each step on what the previous left; ops/doctor.py finds, regrag.domain.integrity names the remedies):
1. deletes a crash interrupted are finished (remedy `delete`);
2. each store fixes what it can alone (`store`: rows nothing refers to, a version hidden behind a successor
   that is gone, search filters out of step with their document, a damaged saved snapshot, damaged cache
   entries);
3. every document not written whole or with a damaged row is ingested again from its object in the bucket
   (`reingest`), as is every object of the bucket the index lacks (after a rebuild: all of them);
4. the check runs again; the exit status says whether the index is now whole.

A damaged database file (`rebuild`) is set aside before any of this, by the CLI (it cannot even be opened):
then step 3 rebuilds the whole index from the bucket. With document ids, only those are ingested again.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from regrag.domain import integrity as I
from regrag.domain.errors import TransientError
from regrag.domain.integrity import Finding
from regrag.entrypoints import handlers
from regrag.entrypoints.cli.remove import complete_deletes, writing
from regrag.ingest.reconcile import is_document_object
from regrag.ops.doctor import finding_line, integrity_findings
from regrag.ports import IntegrityCheck
from regrag.services import Services


def cmd_repair(services: Services, args: argparse.Namespace, set_aside: list[str] | None = None) -> int:
    """Exit 0 when the index is whole afterwards (warnings aside), 1 otherwise."""
    with writing(services, "repair"):
        report = repair(services, list(args.doc_ids or ()))
    report["set_aside"] = set_aside or []
    print(json.dumps(report, ensure_ascii=False, indent=1))
    for line in report["remaining"]:
        print(f"still wrong: {line}", file=sys.stderr)
    return 0 if not report["remaining"] else 1


def repair(services: Services, only: list[str]) -> dict[str, Any]:
    if only:
        reingested, failed = _reingest(services, _objects_of(services, only))
        return _report(services, [], [], reingested, failed, set(only))
    deleted = [meta.doc_id for meta in complete_deletes(services)]
    findings = integrity_findings(services)
    fixed = _store_fixes(services, findings)
    doc_ids = {d for f in findings if f.remedy == I.REINGEST for d in f.doc_ids}
    names = _objects_of(services, sorted(doc_ids))
    names += [f.subject for f in findings if f.kind in ("missing_document", "outdated_document")]
    names += _unindexed(services)
    reingested, failed = _reingest(services, list(dict.fromkeys(names)))
    return _report(services, deleted, fixed, reingested, failed, doc_ids)


def _store_fixes(services: Services, findings: list[Finding]) -> list[Finding]:
    fixers: list[IntegrityCheck] = list(services.integrity)
    if not fixers and isinstance(services.store, IntegrityCheck):
        fixers.append(services.store)
    fixed: list[Finding] = []
    for fixer in fixers:
        fixed += fixer.fix([f for f in findings if f.remedy == I.STORE and f not in fixed])
    return fixed


def _objects_of(services: Services, doc_ids: list[str]) -> list[str]:
    """The bucket objects the documents came from (a document whose row is damaged is not readable: the
    bucket listing finds it among the objects the index lacks)."""
    names = []
    for doc_id in doc_ids:
        found = services.store.get_document(doc_id)
        if found is not None and found[0].source_name:
            names.append(found[0].source_name)
    return names


def _unindexed(services: Services) -> list[str]:
    """Objects of the bucket the index does not hold at their generation (all of them after a rebuild)."""
    stored = {m.source_name: m.generation for m in services.store.list_documents()}
    return [
        b.name for b in services.blobs.list() if is_document_object(b.name) and stored.get(b.name, -1) < b.generation
    ]


def _reingest(services: Services, names: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """Ingest each object again, whatever the index holds: (ingested, failed with the error)."""
    done: list[str] = []
    failed: list[dict[str, Any]] = []
    for name in names:
        before = len(services.failures.recorded())
        try:
            result = handlers.ingest_name(services, name)
        except TransientError as exc:
            failed.append({"file": name, "error": str(exc)})
            continue
        problems = services.failures.recorded()[before:]
        if result is None or problems:
            failed += [{"file": name, "error": p.get("error")} for p in problems] or [{"file": name, "error": "?"}]
        else:
            done.append(name)
    if services.prepare_search is not None:
        services.prepare_search()
    return done, failed


def _report(
    services: Services,
    deleted: list[str],
    fixed: list[Finding],
    reingested: list[str],
    failed: list[dict[str, Any]],
    doc_ids: set[str],
) -> dict[str, Any]:
    """What was done and what the check finds afterwards. Where the pipeline runs elsewhere (GCP: Pub/Sub and the
    deployed functions), the documents just republished are written after this command ends: their findings
    are `pending`, for `regrag doctor` to confirm later, not failures of the repair."""
    found = integrity_findings(services)
    after = [f for f in found if f.severity == I.ERROR]
    elsewhere = services.bus is None
    pending = [f for f in after if elsewhere and (f.subject in reingested or set(f.doc_ids) & doc_ids)]
    return {
        "deletes_completed": deleted,
        "fixed": [finding_line(f) for f in fixed],
        "reingested": reingested,
        "failed": failed,
        "pending": [finding_line(f) for f in pending],
        "remaining": [finding_line(f) for f in after if f not in pending],
        "warnings": [finding_line(f) for f in found if f.severity == I.WARNING],
    }
