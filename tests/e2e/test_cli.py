"""The `regrag` command: ingest a folder with a manifest, re-ingest idempotently, ask, bad input."""

from __future__ import annotations

import json
import shutil

from regrag.entrypoints.cli import main

from conftest import FIXTURES, SAMPLE


def make_corpus(tmp_path, ids):
    root = tmp_path / "corpus"
    (root / "docs").mkdir(parents=True)
    lines = []
    for line in (SAMPLE / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["doc_id"] in ids:
            shutil.copy(SAMPLE / record["file"], root / record["file"])
            lines.append(line)
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_ask_and_reingest(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    corpus = make_corpus(tmp_path, {"nat-reg-0088", "sh-0001", "nat-law-0076", "nat-law-0077"})
    code, out, err = run(capsys, "ingest", str(corpus))
    assert code == 0, err
    summary = json.loads(out)
    assert summary["chunked"] == 4 and summary["failed"] == 0 and summary["index"]["documents"] == 4
    code, out, _ = run(capsys, "ingest", str(corpus), "--quiet")
    assert json.loads(out)["unchanged"] == 4  # nothing re-embedded or rewritten

    code, out, _ = run(capsys, "ask", "计划检修停电要提前几天通知用户", "--doc-class", "grid")
    assert code == 0 and "〔《" in out and "生效：" in out
    code, out, _ = run(capsys, "ask", "突发事件应对法 预防措施 处罚", "--as-of", "2015-06-01", "--json")
    body = json.loads(out)
    assert {c["doc_id"] for c in body["candidates"]} == {"nat-law-0076"}


def test_ingest_leaves_a_large_index_ready_to_search(tmp_path, monkeypatch, capsys):
    """Over REGRAG_SNAPSHOT_FILES_MIN_CHUNKS, ingest builds and saves the search snapshot, so that the server
    started next maps it instead of building it (about a minute at a million chunks)."""
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_SNAPSHOT_FILES_MIN_CHUNKS", "1")
    code, out, err = run(capsys, "ingest", str(make_corpus(tmp_path, {"nat-reg-0088", "sh-0001"})))
    assert code == 0, err
    summary = json.loads(out)
    saved = list((tmp_path / "data" / "index.sqlite.snapshot").glob("v*/meta.json"))
    assert len(saved) == 1 and summary["search_prepared_s"] >= 0 and summary["search_prepared"] is True
    assert json.loads(saved[0].read_text(encoding="utf-8"))["chunks"] == summary["index"]["chunks"]
    # an unchanged re-ingest writes nothing, so the saved snapshot stays the current one: nothing rebuilt
    code, out, err = run(capsys, "ingest", str(tmp_path / "corpus"), "--quiet")
    assert code == 0 and json.loads(out)["unchanged"] == 2, err
    assert list((tmp_path / "data" / "index.sqlite.snapshot").glob("v*/meta.json")) == saved


def test_a_failed_search_preparation_is_reported_and_the_batch_stays_ingested(tmp_path, monkeypatch, capsys):
    from regrag.adapters.local.search_store import SqliteSearchStore

    def fail(self):
        raise MemoryError("no room for the snapshot build")

    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setattr(SqliteSearchStore, "prepare_search", fail)
    code, out, err = run(capsys, "ingest", str(make_corpus(tmp_path, {"nat-reg-0088"})))
    summary = json.loads(out)
    assert code == 0 and summary["chunked"] == 1 and summary["search_prepared"] is False
    assert "search not prepared" in err and "MemoryError: no room for the snapshot build" in err
    code, out, _ = run(capsys, "ask", "计划检修停电要提前几天通知用户", "--json")
    assert code == 0 and json.loads(out)["candidates"]  # the server side builds its own snapshot


def test_bad_files_are_reported_and_the_rest_is_ingested(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(FIXTURES / "formats" / "sh-0001.txt", folder / "sh-0001.txt")
    (folder / "empty.md").write_bytes(b"")
    (folder / "binary.pdf").write_bytes(b"%PDF-1.4\n\x00\x01garbage")
    code, out, err = run(capsys, "ingest", str(folder))
    assert code == 2
    summary = json.loads(out)
    assert summary["chunked"] == 1 and summary["failed"] == 2
    assert "empty.md" in err and "binary.pdf" in err


def test_bad_filter_and_missing_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    code, out, _ = run(capsys, "ask", "并网", "--province", "mars")
    assert code == 1 and "unknown value" in out
    code, _, err = run(capsys, "ingest", str(tmp_path / "nope"))
    assert code == 2 and "no such file" in err


def test_bad_configuration_names_the_variable(monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_TOP_K", "lots")
    code, _, err = run(capsys, "ask", "并网")
    assert code == 2 and "REGRAG_TOP_K" in err


def test_a_document_rejected_by_upsert_counts_as_failed(tmp_path, monkeypatch, capsys):
    """A reused doc_id passes ingest and embed but is refused by upsert: the run must say so and exit 2."""
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    corpus = make_corpus(tmp_path, {"sh-0001"})
    assert run(capsys, "ingest", str(corpus))[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(corpus / "docs" / "sh-0001.md", other / "copy.md")
    (other / "copy.md.meta.json").write_text(json.dumps({"doc_id": "sh-0001"}), encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(other))
    assert code == 2 and json.loads(out)["failed"] == 1
    assert "failed (upsert): copy.md (doc sh-0001)" in err and "already used by" in err


def test_delete_and_prune_remove_documents_through_the_delete_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    corpus = make_corpus(tmp_path, {"nat-reg-0088", "sh-0001", "ha-0001"})
    assert run(capsys, "ingest", str(corpus))[0] == 0
    code, out, _ = run(capsys, "delete", "ha-0001", "nope")
    assert code == 2 and json.loads(out.splitlines()[0]) == {
        "doc_id": "ha-0001",
        "deleted": True,
        "source": "docs/ha-0001.md",
    }
    code, out, _ = run(capsys, "ask", "供用电 用电人", "--json")
    assert "ha-0001" not in {c["doc_id"] for c in json.loads(out)["candidates"]}

    # the file of sh-0001 leaves the folder (and the manifest): --prune removes it from the index
    manifest = corpus / "manifest.jsonl"
    lines = [ln for ln in manifest.read_text(encoding="utf-8").splitlines() if '"sh-0001"' not in ln]
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(corpus), "--prune")
    summary = json.loads(out)
    assert code == 0 and summary["pruned"] == 1 and "pruned: sh-0001" in err
    # ha-0001 is still in the folder: deleted from the index above, this run brings it back
    assert summary["chunked"] == 1 and summary["unchanged"] == 1 and summary["index"]["documents"] == 2
    code, out, _ = run(capsys, "ingest", str(corpus), "--prune")
    assert json.loads(out)["pruned"] == 0 and json.loads(out)["unchanged"] == 2


def test_date_corrections_are_summarised_audited_and_old_derivations_redone(tmp_path, monkeypatch, capsys):
    import sqlite3

    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    corpus = make_corpus(tmp_path, {"nat-law-0076", "nat-law-0077"})
    code, out, err = run(capsys, "ingest", str(corpus))
    assert code == 0 and json.loads(out)["dates_corrected"] >= 1
    # the manifest gives 2024-06-28 (its promulgation); the text: 本法自2024年11月1日起施行
    assert "dates: nat-law-0077: sidecar effective_date 2024-06-28 is earlier" in err
    code, out, _ = run(capsys, "audit", "--json")
    audited = {row["doc_id"]: row for row in json.loads(out)}
    assert audited["nat-law-0077"]["effective_date"] == "2024-11-01"
    assert audited["nat-law-0077"]["promulgated"] == "2024-06-28"
    assert audited["nat-law-0077"]["sources"] == {"promulgated": "sidecar", "effective_date": "text"}

    # an index derived by older rules (before dates came from the text) is derived again, nothing lost or doubled
    with sqlite3.connect(tmp_path / "data" / "index.sqlite") as con:
        con.execute("UPDATE document SET meta_json = json_set(meta_json, '$.ingest_version', 1)")
    code, out, _ = run(capsys, "ingest", str(corpus))
    summary = json.loads(out)
    assert summary["chunked"] == 2 and summary["unchanged"] == 0
    before_chunks = summary["index"]["chunks"]
    code, out, _ = run(capsys, "ingest", str(corpus))
    assert json.loads(out)["unchanged"] == 2 and json.loads(out)["index"]["chunks"] == before_chunks


def test_a_province_the_text_does_not_tell_is_flagged_not_taken_for_national(tmp_path, monkeypatch, capsys):
    from regrag.views.documents import document_view
    from regrag.wiring import get_services

    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    folder = tmp_path / "loose"
    folder.mkdir()
    body = "第一条 为了规范充电设施建设，制定本办法。\n第二条 本办法自2024年1月1日起施行。\n"
    (folder / "sz-charging.md").write_text("# 深圳市电动汽车充电设施管理办法\n\n" + body, encoding="utf-8")
    (folder / "pv-rules.md").write_text("# 光伏电站运行管理办法\n\n" + body, encoding="utf-8")
    # cut short: no article says when it takes effect; its place is known, and it is counted apart
    cut = "# 深圳市充电设施运营规定\n\n第一条 为了规范充电设施运营，制定本规定。\n第二条 运营单位应当登记。\n"
    (folder / "sz-cut.md").write_text(cut, encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(folder))
    assert code == 0, err
    assert json.loads(out)["province_unknown"] == 1 and json.loads(out)["possibly_incomplete"] == 1
    assert "metadata: sz-cut: text may be incomplete: it states no entry into force" in err
    assert "metadata: pv-rules: province unknown: neither the title nor an issuer line names a place" in err

    store = get_services().store
    shenzhen = document_view(store, "sz-charging")
    assert shenzhen["metadata"]["province"] == "gd" and shenzhen["provenance"]["province"] == "inferred"
    assert shenzhen["metadata"]["place_evidence"] == "title: 深圳"
    unknown = document_view(store, "pv-rules")
    assert unknown["metadata"]["province"] == "unknown" and unknown["provenance"]["province"] == "unknown"
    assert unknown["metadata"]["metadata_warnings"][0].startswith("province unknown")
    # not nationwide law: a question filtered to national rules does not see it
    code, out, _ = run(capsys, "ask", "光伏电站运行管理", "--province", "national", "--json")
    assert "pv-rules" not in {c["doc_id"] for c in json.loads(out)["candidates"]}


def test_a_date_only_the_metadata_gives_is_audited_as_such_not_as_an_amendment_line(tmp_path, monkeypatch, capsys):
    # 消耗臭氧层物质管理条例 2018: the text's header and 施行 clause are the 2010 original's, the manifest dates it
    # 2018-03-19; the audit named an amendment line it printed as “None”
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    code, _, err = run(capsys, "ingest", str(make_corpus(tmp_path, {"nat-reg-0079"})))
    assert code == 0, err
    code, out, _ = run(capsys, "audit")
    assert "effective date uncertain: 2018-03-19 comes from the metadata alone" in out
    assert "None" not in out


def test_an_amendments_unstated_entry_into_force_is_audited_marked_and_settled_by_a_sidecar(
    tmp_path, monkeypatch, capsys
):
    from regrag.views.documents import document_view
    from regrag.wiring import get_services, reset_services

    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    corpus = make_corpus(tmp_path, {"nat-law-0015", "nat-law-0018"})
    manifest = corpus / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    for row in rows:  # as the corpus's manifest has it: the sample's adds the decision's date
        assert row.pop("amendment_effective_date", "2010-04-01") == "2010-04-01"
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(corpus))
    assert code == 0 and json.loads(out)["dates_uncertain"] == 1, err
    assert "dates: 1 amended document(s) are cited with the adoption date of their latest amendment" in err
    code, out, err = run(capsys, "audit", "--json")
    renewables = {row["doc_id"]: row for row in json.loads(out)}["nat-law-0015"]
    assert renewables["effective_date"] == "2009-12-26" and renewables["effective_date_uncertain"] is True
    assert "《关于修改<中华人民共和国可再生能源法>的决定》修正" in renewables["amendment_line"]
    code, out, err = run(capsys, "audit")
    assert "effective date uncertain: 2009-12-26 is the adoption of the latest amendment" in out
    assert "1 dated by an amendment's adoption" in err
    view = document_view(get_services().store, "nat-law-0015")
    assert view["metadata"]["effective_date_uncertain"] is True
    assert "2009-12-26为该修改通过之日，实际施行日期可能较晚" in view["notes"]["effective_date"]
    assert "notes" in view and "effective_date" not in document_view(get_services().store, "nat-law-0018")["notes"]

    # the decision: 本决定自2010年4月1日起施行. A sidecar says so, and the citation's date follows
    for row in rows:
        if row["doc_id"] == "nat-law-0015":
            row["amendment_effective_date"] = "2010-04-01"
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    reset_services()
    code, out, err = run(capsys, "ingest", str(corpus))
    assert code == 0 and json.loads(out)["dates_uncertain"] == 0 and json.loads(out)["chunked"] == 1, err
    view = document_view(get_services().store, "nat-law-0015")
    assert view["metadata"]["effective_date"] == "2010-04-01" and view["metadata"]["promulgated"] == "2009-12-26"
    assert view["provenance"]["effective_date"] == "sidecar" and view["notes"] == {}
    code, out, _ = run(capsys, "ask", "可再生能源 全额收购", "--as-of", "2010-02-01", "--json")
    assert "nat-law-0015" not in {c["doc_id"] for c in json.loads(out)["candidates"]}  # not in force yet then
