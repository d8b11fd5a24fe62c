"""A text of articles none of which says when it takes effect is flagged as possibly cut short (ingest's
metadata warning, `regrag audit`, the document view's note): the source's truncated regulations look so."""

import json

from regrag.entrypoints import handlers
from regrag.ingest.ingest import build_document
from regrag.ports import Blob
from regrag.views.documents import metadata_audit, reader_notes

from conftest import sample_text

WHOLE = "# 某某条例\n\n第一条 为了规范某某，制定本条例。\n\n第二条 本条例自2020年1月1日起施行。\n"
# cut short: its header still says when it took effect, as a truncated copy keeps it
CUT = (
    "# 某某条例\n\n（2019年12月1日通过 自2020年1月1日起施行）\n\n"
    "第一条 为了规范某某，制定本条例。\n\n第二条 某某应当登记。\n"
)


def meta(text: str, doc_id: str = "syn-rules"):
    sidecar = json.dumps({"doc_id": doc_id, "province": "national"}).encode()
    name = f"docs/{doc_id}.md"
    return build_document(name, Blob(name, text.encode(), 1), Blob("m", sidecar, 1), 800).meta


def test_a_text_without_its_entry_into_force_article_may_be_incomplete():
    cut = meta(CUT)
    assert cut.may_be_incomplete and "ends at 第二条" in cut.metadata_warnings[0]
    assert "可能不完整" in reader_notes(cut)["text"]
    assert not meta(WHOLE).may_be_incomplete and "text" not in reader_notes(meta(WHOLE))


def test_the_samples_truncated_regulation_is_flagged_and_listed_by_the_audit(hash_services):
    for name, text in (("docs/zj-0004.md", sample_text("zj-0004")), ("docs/whole.md", WHOLE)):
        hash_services.blobs.write(name, text.encode("utf-8"))
        handlers.ingest_name(hash_services, name)
    rows = metadata_audit(hash_services.store)
    # the source stops at 第九条; the whole text (and its province, 浙江省 in the title) raises nothing
    assert [r["doc_id"] for r in rows if r["may_be_incomplete"]] == ["zj-0004"]
    assert any("ends at 第九条" in w for r in rows for w in r["metadata_warnings"])
