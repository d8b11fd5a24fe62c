"""Many corpora: fan-out with per-corpus timeouts, merge by rank, collapse duplicates, validation."""

from __future__ import annotations

import json
import time

import pytest

from regrag.api import endpoints
from regrag.api.routes import call

from conftest import SAMPLE, SlowOrBrokenIndex, ingest_sample, sample_manifest, upload, with_vectors


@pytest.fixture
def services(hash_services):
    ingest_sample(hash_services, ["nat-reg-0088", "nat-law-0069", "sh-0001", "ha-0001", "zj-0004"])
    return hash_services


QUESTION = "供电企业因计划检修需要停电，应当提前几天通知用户？"


def test_corpora_are_listed_with_counts(services):
    rows = {r["corpus"]: r for r in endpoints.corpora(services)["corpora"]}
    assert set(rows) == {"national", "shanghai", "henan", "zhejiang"}
    assert rows["national"]["documents"] == 2 and rows["shanghai"]["chunks"] == 43


def test_fan_out_reports_every_corpus_and_names_corpora(services):
    status, body = call(endpoints.query, services, {"question": QUESTION, "corpora": ["national", "shanghai", "henan"]})
    assert status == 200
    stats = {s["corpus"]: s for s in body["corpus_stats"]}
    assert set(stats) == {"national", "shanghai", "henan"}
    assert all(s["status"] == "ok" and s["hits"] > 0 and s["latency_ms"] >= 0 for s in stats.values())
    assert {c["corpus"] for c in body["candidates"]} <= {"national", "shanghai", "henan"}
    assert all(c["corpora"] for c in body["candidates"])
    assert all(b["citation"]["corpus"] in stats for b in body["bullets"])
    # default: all corpora
    status, body = call(endpoints.query, services, {"question": QUESTION})
    assert {s["corpus"] for s in body["corpus_stats"]} == {"national", "shanghai", "henan", "zhejiang"}


def test_merge_is_by_rank_not_raw_scores(services):
    # the province filter turns off the national preference, which would tilt the shares it checks
    request = {"question": QUESTION, "corpora": ["national", "shanghai"], "filters": {"province": ["national", "sh"]}}
    _status, body = call(endpoints.query, services, {**request, "top_k": 6})
    firsts = {}
    for c in body["candidates"]:
        firsts.setdefault(c["corpus"], c)
    # each corpus's own best candidate gets the same RRF share (1 / (k + 1)) whatever its raw BM25/cosine score
    assert len(firsts) == 2
    assert abs(firsts["national"]["score"] - firsts["shanghai"]["score"]) < 1e-9


def test_corpus_weights_tilt_the_merge(services):
    body = call(
        endpoints.query,
        services,
        {"question": QUESTION, "corpora": ["national", "shanghai"], "corpus_weights": {"shanghai": 3.0}},
    )[1]
    assert body["candidates"][0]["corpus"] == "shanghai"


def test_slow_corpus_times_out_without_failing_the_request(services):
    slow = with_vectors(services, SlowOrBrokenIndex(services.vectors, slow={"henan"}, delay_s=1.5))
    started = time.perf_counter()
    status, body = call(
        endpoints.query, slow, {"question": QUESTION, "corpora": ["national", "henan"], "corpus_timeout_s": 0.3}
    )
    elapsed = time.perf_counter() - started
    assert status == 200 and elapsed < 1.2
    stats = {s["corpus"]: s for s in body["corpus_stats"]}
    assert stats["henan"]["status"] == "timeout" and stats["henan"]["hits"] == 0
    assert stats["national"]["status"] == "ok"
    assert body["candidates"] and all(c["corpus"] == "national" for c in body["candidates"])


class ColdIndex:
    """Wraps a VectorIndex that sets itself up on first use (`cold_s`), as Vertex AI's client does on a cold
    instance (imports, channel) and the local index does after a write (its in-memory arrays)."""

    def __init__(self, inner: object, cold_s: float) -> None:
        self.inner, self.cold_s, self.ready = inner, cold_s, False

    def warm(self) -> None:
        if not self.ready:
            time.sleep(self.cold_s)
            self.ready = True

    def search(self, vector, filters, k):
        self.warm()
        return self.inner.search(vector, filters, k)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def test_a_cold_index_makes_the_first_query_slower_not_unanswered(services):
    cold = with_vectors(services, ColdIndex(services.vectors, cold_s=0.5))
    request = {"question": QUESTION, "corpora": ["national", "shanghai"], "corpus_timeout_s": 0.3}
    status, body = call(endpoints.query, cold, request)
    assert status == 200, body
    assert {s["status"] for s in body["corpus_stats"]} == {"ok"}
    assert body["timings_ms"]["retrieve_warm"] >= 500 and body["bullets"]
    status, body = call(endpoints.query, cold, request)
    assert status == 200 and body["timings_ms"]["retrieve_warm"] < 300


def test_an_index_that_fails_to_warm_is_still_searched_and_reported_per_corpus(services):
    class NoWarm(ColdIndex):
        """Fails to set itself up ahead; its searches do as they would."""

        def warm(self) -> None:
            raise RuntimeError("index shard unavailable")

        def search(self, vector, filters, k):
            return self.inner.search(vector, filters, k)

    status, body = call(endpoints.query, with_vectors(services, NoWarm(services.vectors, 0.0)), {"question": QUESTION})
    assert status == 200 and {s["status"] for s in body["corpus_stats"]} == {"ok"}  # the searches themselves worked
    broken = with_vectors(services, NoWarm(SlowOrBrokenIndex(services.vectors, broken={"national"}), 0.0))
    status, body = call(endpoints.query, broken, {"question": QUESTION, "corpora": ["national", "shanghai"]})
    stats = {s["corpus"]: s for s in body["corpus_stats"]}
    assert status == 200 and stats["national"]["status"] == "error" and stats["shanghai"]["status"] == "ok"


def test_broken_corpus_is_an_error_entry(services):
    broken = with_vectors(services, SlowOrBrokenIndex(services.vectors, broken={"shanghai"}))
    status, body = call(endpoints.query, broken, {"question": QUESTION, "corpora": ["shanghai", "national"]})
    stats = {s["corpus"]: s for s in body["corpus_stats"]}
    assert status == 200 and stats["shanghai"]["status"] == "error"
    assert "index shard unavailable" in stats["shanghai"]["error"]


def test_no_corpus_answering_is_a_503_with_the_stats(services):
    dead = with_vectors(services, SlowOrBrokenIndex(services.vectors, broken={"shanghai", "national"}))
    status, body = call(endpoints.query, dead, {"question": QUESTION, "corpora": ["shanghai", "national"]})
    assert status == 503
    assert {s["status"] for s in body["error"]["corpus_stats"]} == {"error"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"question": "", "corpora": ["national"]}, "question must be a non-empty string"),
        ({"corpora": ["national"]}, "question is required"),
        ({"question": QUESTION, "filter": {"province": "gd"}}, "unknown field 'filter'; did you mean 'filters'?"),
        ({"question": QUESTION, "corpora": []}, "corpora is empty"),
        ({"question": QUESTION, "corpora": ["mars"]}, "unknown corpus"),
        ({"question": QUESTION, "corpora": [f"c{i}" for i in range(21)]}, "corpora has 21 items; at most 20"),
        ({"question": QUESTION, "corpora": ["Bad Name"]}, "'Bad Name' is not a valid"),
        ({"question": QUESTION, "corpus_timeout_s": 0}, "corpus_timeout_s"),
        ({"question": QUESTION, "corpus_weights": {"national": "high"}}, "corpus_weights"),
    ],
)
def test_validation(services, body, message):
    status, response = call(endpoints.query, services, body)
    assert status == 400 and message in response["error"]["message"]


def test_duplicates_across_corpora_collapse_into_one_candidate(services):
    record = sample_manifest()["sh-0001"]
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles")}
    sidecar.update(doc_id="client-a-sh-0001", corpus="client-a")
    upload(services, SAMPLE / record["file"], "corpora/client-a/sh-0001.md", sidecar)
    _status, body = call(
        endpoints.query,
        services,
        {"question": "计划检修 公告方式 通知停电 提前七日", "corpora": ["shanghai", "client-a"]},
    )
    top = body["candidates"][0]
    assert top["article"] == "第十五条" and sorted(top["corpora"]) == ["client-a", "shanghai"]
    keys = [(c["title"], c["article"], c["metadata"]["part"]) for c in body["candidates"]]
    assert len(keys) == len(set(keys))


def test_one_doc_id_cannot_be_claimed_by_two_objects(services):
    record = sample_manifest()["sh-0001"]
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles")}
    before = services.store.stats()["chunks"]
    upload(services, SAMPLE / record["file"], "elsewhere/sh-0001-copy.md", sidecar)
    failures = services.failures.list("upsert")
    assert failures and "already used by" in failures[-1]["error"]
    assert services.store.stats()["chunks"] == before
    assert services.store.get_document("sh-0001")[0].source_name == "docs/sh-0001.md"


def test_documents_and_versions_endpoints(hash_services):
    ingest_sample(hash_services, ["nat-law-0076", "nat-law-0077"])
    doc = endpoints.document(hash_services, "nat-law-0077")
    assert doc["metadata"]["supersedes"] == "nat-law-0076" and doc["text"].startswith("# 中华人民共和国突发事件应对法")
    first = doc["anchors"][0]
    assert doc["text"][first["start"] : first["end"]].startswith(first["article"])
    chain = endpoints.versions(hash_services, "nat-law-0077")["versions"]
    assert [v["doc_id"] for v in chain] == ["nat-law-0076", "nat-law-0077"]
    # promulgated 2024-06-28 (the sidecar's date), in force from 2024-11-01 (本法自2024年11月1日起施行)
    assert chain[0]["effective_to"] == chain[1]["effective_from"] == "2024-11-01"
    assert chain[1]["promulgated"] == "2024-06-28"
    assert endpoints.versions(hash_services, "nat-law-0076")["versions"] == chain
    status, _body = call(endpoints.document, hash_services, "nope")
    assert status == 404
    json.dumps(doc, ensure_ascii=False)


def test_the_local_fan_out_searches_one_corpus_per_core_at_a_time(hash_services):
    """Local searches compute in this process: more threads than cores only contend (bench/README)."""
    import os

    from regrag.wiring import models

    assert hash_services.retriever.max_workers == models.cores() == len(os.sched_getaffinity(0))
    assert models.build_retriever(hash_services.settings, *[None] * 4, None).max_workers == 8  # GCP: remote waits


def test_the_library_lists_its_documents_with_their_status_today(hash_services):
    """GET /documents: what can be asked about, where, and whether it is the law today."""
    from werkzeug.test import Client

    from regrag.api.server import wsgi_app

    ingest_sample(hash_services, ["nat-law-0076", "nat-law-0077", "sh-0001"])
    client = Client(wsgi_app(hash_services))
    body = client.get("/documents").get_json()
    status = {d["doc_id"]: d["status"] for d in body["documents"]}
    assert status == {"nat-law-0076": "superseded", "nat-law-0077": "in_force", "sh-0001": "in_force"}
    old = next(d for d in body["documents"] if d["doc_id"] == "nat-law-0076")
    assert old["superseded_by"] == "nat-law-0077" and old["effective_date"] == "2007-11-01"
    # documents in force by province, over the whole library whatever is asked for
    assert body["in_force_by_province"] == {"national": 1, "sh": 1}
    shanghai = client.get("/documents", query_string={"province": "sh", "title": "供用电"}).get_json()
    assert [d["title"] for d in shanghai["documents"]] == ["上海市供用电条例"]
    assert shanghai["in_force_by_province"] == body["in_force_by_province"]
    assert client.get("/documents", query_string={"title": "没有这样的标题"}).get_json()["documents"] == []
    # a date the text does not record is listed as one to check, as citations mark it （待核）
    stored = {m.doc_id: m.effective_date_uncertain for m in hash_services.store.list_documents()}
    assert {d["doc_id"]: d["effective_date_uncertain"] for d in body["documents"]} == stored and any(stored.values())
    # bad input: a 400 naming the parameter
    for query, words in (({"province": "zz"}, "query.province"), ({"page": "2"}, "unknown field 'page'")):
        response = client.get("/documents", query_string=query)
        assert response.status_code == 400 and words in response.get_json()["error"]["message"]
