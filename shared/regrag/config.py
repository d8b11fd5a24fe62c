"""Settings: parsed once from the environment into a frozen dataclass; every problem reported in one error."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from regrag.cloud_facts import (
    DEFAULT_TEMPERATURE,
    DOCUMENTAI_OCR_LOCATIONS,
    DOCUMENTAI_PROCESSOR_PATTERN,
    GEMINI_MODELS,
    THINKING_LEVELS,
    GenerationParams,
    gemini_model,
    generation_params,
)


class ConfigError(ValueError):
    """The environment does not describe a runnable configuration; the message lists every problem."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# comma-separated emails; no ':' so an IAM member string ("serviceAccount:…") is refused, not silently unmatched
_EMAILS = r"\s*[^,@\s:]+@[^,@\s:]+(\s*,\s*[^,@\s:]+@[^,@\s:]+)*\s*,?\s*"


@dataclass(frozen=True)
class Settings:
    """Everything configurable, with the environment variable that sets it in `metadata['env']`."""

    mode: str = field(default="local", metadata={"env": "REGRAG_MODE", "choices": ("local", "gcp")})
    data_dir: Path = field(default=Path(".regrag"), metadata={"env": "REGRAG_DATA_DIR"})
    bucket_dir: Path | None = field(default=None, metadata={"env": "REGRAG_BUCKET_DIR"})
    embedder: str = field(default="e5", metadata={"env": "REGRAG_EMBEDDER", "choices": ("e5", "hash", "vertex")})
    vector_cache: Path | None = field(default=None, metadata={"env": "REGRAG_VECTOR_CACHE"})
    chunk_max_chars: int = field(default=800, metadata={"env": "REGRAG_CHUNK_MAX_CHARS", "min": 100})
    embed_batch_size: int = field(default=32, metadata={"env": "REGRAG_EMBED_BATCH_SIZE", "min": 1})
    # retrieval
    top_k: int = field(default=12, metadata={"env": "REGRAG_TOP_K", "min": 1, "max": 100})
    dense_k: int = field(default=50, metadata={"env": "REGRAG_DENSE_K", "min": 1})
    lexical_k: int = field(default=50, metadata={"env": "REGRAG_LEXICAL_K", "min": 1})
    rrf_k: int = field(default=20, metadata={"env": "REGRAG_RRF_K", "min": 1})
    # the legs weigh the same: lay and scenario questions share few words with the statute and the dense leg is
    # their only bridge (0.5, tuned on the dev set alone, cost lay-dev 0.02 nDCG; bench/README.md)
    dense_weight: float = field(default=1.0, metadata={"env": "REGRAG_DENSE_WEIGHT", "min": 0.0})
    lexical_weight: float = field(default=1.0, metadata={"env": "REGRAG_LEXICAL_WEIGHT", "min": 0.0})
    # the key-term coverage ranking fused after retrieval (query/retrieve.py coverage_rerank); 0 turns it off
    coverage_weight: float = field(default=1.0, metadata={"env": "REGRAG_COVERAGE_WEIGHT", "min": 0.0})
    # the question-form ranking (query/forms.py: 怎么处罚 → penalty articles …); 0 turns it off
    form_weight: float = field(default=0.0, metadata={"env": "REGRAG_FORM_WEIGHT", "min": 0.0})
    title_weight: float = field(default=0.5, metadata={"env": "REGRAG_TITLE_WEIGHT", "min": 0.0})
    # rank national rules and those of the provinces a question names before other provinces' local rules
    # (query/retrieve.py scope_first); never when the request filters by province
    place_scope: bool = field(default=True, metadata={"env": "REGRAG_PLACE_SCOPE"})
    # when the question names no place, local rules' scores times this factor (query/retrieve.py
    # prefer_national); 1 turns it off
    national_preference: float = field(
        default=0.8, metadata={"env": "REGRAG_NATIONAL_PREFERENCE", "min": 0.0, "max": 1.0}
    )
    corpus_timeout_s: float = field(default=3.0, metadata={"env": "REGRAG_CORPUS_TIMEOUT_S", "min": 0.05})
    query_cache_size: int = field(default=2048, metadata={"env": "REGRAG_QUERY_CACHE_SIZE", "min": 0})
    # local mode: an index of at least this many chunks keeps its search snapshot on disk (snapshot_files.py),
    # so a server start maps it instead of rebuilding it; 0 = always
    snapshot_files_min_chunks: int = field(
        default=100_000, metadata={"env": "REGRAG_SNAPSHOT_FILES_MIN_CHUNKS", "min": 0}
    )
    admin_token: str | None = field(default=None, repr=False, metadata={"env": "REGRAG_ADMIN_TOKEN", "secret": True})
    # GCP mode: who may call /admin/* (comma-separated emails: the scheduler's service account, operators). The
    # caller's identity is the email of the ID token Cloud Run IAM verified (ops/admin.py); unset: disabled.
    admin_principals: str | None = field(
        default=None,
        metadata={"env": "REGRAG_ADMIN_PRINCIPALS", "pattern": _EMAILS},
    )
    # web origins other than the API's own that may call it from a browser (comma-separated, e.g.
    # "https://regrag.example.com"; "*" for any). Unset: same origin only, so a page a local user visits
    # cannot query or post feedback in the background.
    cors_origins: str | None = field(
        default=None,
        metadata={"env": "REGRAG_CORS_ORIGINS", "pattern": r"\s*(\*|https?://[^,\s/]+(\s*,\s*https?://[^,\s/]+)*)\s*"},
    )
    # rerank
    rerank: bool = field(default=True, metadata={"env": "RERANK"})
    rerank_top_n: int = field(default=5, metadata={"env": "REGRAG_RERANK_TOP_N", "min": 1})
    # from the measured prompt and answer sizes (infra/README.md "Rerank deadline"): 12 candidates ≈ 3.9 k
    # characters in (median), ≈ 0.7 k out; 4 s left no margin for decoding the reasons
    # the rerank and compose functions, called by query over HTTP with a Google ID token (unset: in process)
    rerank_url: str | None = field(default=None, metadata={"env": "REGRAG_RERANK_URL", "pattern": r"https?://\S+"})
    compose_url: str | None = field(default=None, metadata={"env": "REGRAG_COMPOSE_URL", "pattern": r"https?://\S+"})
    compose_timeout_s: float = field(default=5.0, metadata={"env": "REGRAG_COMPOSE_TIMEOUT_S", "min": 0.1})
    rerank_timeout_s: float = field(default=6.0, metadata={"env": "REGRAG_RERANK_TIMEOUT_S", "min": 0.1})
    gemini_api_key: str | None = field(default=None, repr=False, metadata={"env": "GEMINI_API_KEY", "secret": True})
    # a model of the table in cloud_facts.py (what it accepts, when it retires, from which page). 3.1 Flash-Lite,
    # not 3.5 Flash-Lite: its page lists a temperature range (0.0–2.0), where 3.5 Flash-Lite's says custom
    # temperatures are ignored, so the rerank's 0.1 would not be honoured. `regrag doctor` checks that it answers,
    # with the production request, and that two identical requests get the same scores.
    gemini_model: str = field(default="gemini-3.1-flash-lite", metadata={"env": "REGRAG_GEMINI_MODEL"})
    # sent only to models that honour it (cloud_facts.generation_params); low, so a question scores the same twice
    gemini_temperature: float = field(
        default=DEFAULT_TEMPERATURE, metadata={"env": "REGRAG_GEMINI_TEMPERATURE", "min": 0.0, "max": 2.0}
    )
    # unset: the lowest level the model lists (MINIMAL or LOW); a level the model does not list is refused here,
    # not by a 400 on every request
    gemini_thinking_level: str | None = field(
        default=None, metadata={"env": "REGRAG_GEMINI_THINKING_LEVEL", "choices": THINKING_LEVELS}
    )
    rerank_cache_size: int = field(default=256, metadata={"env": "REGRAG_RERANK_CACHE_SIZE", "min": 0})
    # where Gemini is reached: the Gemini API (key) unless Vertex AI mode (project, location, service account)
    gemini_base_url: str | None = field(default=None, metadata={"env": "REGRAG_GEMINI_BASE_URL"})
    # None: Vertex AI in GCP mode unless a key (or its secret) is configured; the Gemini API (key) locally
    gemini_vertex: bool | None = field(default=None, metadata={"env": "REGRAG_GEMINI_VERTEX"})
    gemini_project: str | None = field(default=None, metadata={"env": "REGRAG_GEMINI_PROJECT"})
    gemini_location: str = field(default="global", metadata={"env": "REGRAG_GEMINI_LOCATION"})
    # a question not in Chinese is put into Chinese by Gemini before it is searched (query/translate.py), where
    # Gemini is configured as for rerank; without it, or off, such a question gets a note asking for Chinese.
    # One short answer (≤ 150 characters): 4 s is the rerank's deadline less its 12 candidates' reading
    translate: bool = field(default=True, metadata={"env": "REGRAG_TRANSLATE"})
    translate_timeout_s: float = field(default=4.0, metadata={"env": "REGRAG_TRANSLATE_TIMEOUT_S", "min": 0.1})
    translate_cache_size: int = field(default=256, metadata={"env": "REGRAG_TRANSLATE_CACHE_SIZE", "min": 0})
    # compose
    compose_top_n: int = field(default=5, metadata={"env": "REGRAG_COMPOSE_TOP_N", "min": 1})
    max_bullets: int = field(default=4, metadata={"env": "REGRAG_MAX_BULLETS", "min": 1})
    # abstention: see query/judge.py RelevanceFloor; the dense floor is on the e5 cosine scale. The coverage
    # floor and the rule below are chosen together on the trade-off curve (bench/abstention.py grid, README)
    relevance_floor: float = field(default=0.55, metadata={"env": "REGRAG_RELEVANCE_FLOOR", "min": 0.0, "max": 1.0})
    dense_floor: float | None = field(default=0.89, metadata={"env": "REGRAG_DENSE_FLOOR"})
    relevance_floor_alone: float = field(default=0.25, metadata={"env": "REGRAG_RELEVANCE_FLOOR_ALONE", "min": 0.0})
    # second abstention rule (query/judge.py): a named reason and confidence less penalties below this →
    # no quotes; 0 = off. 0.1 with the floor at 0.55: the point of the curve where dev loses no more than one
    # answer (bench/README.md)
    abstain_below: float = field(default=0.1, metadata={"env": "REGRAG_ABSTAIN_BELOW", "min": 0.0, "max": 1.0})
    quote_floor: float = field(default=0.2, metadata={"env": "REGRAG_QUOTE_FLOOR", "min": 0.0, "max": 1.0})
    # retrieval aids (query/aids/hyde.py, ingest/questions.py): extra RRF legs, off unless the eval shows a gain.
    # REGRAG_GENERATOR picks their model: gemini (the product; key or Vertex AI as for rerank) or local (the
    # deterministic ExtractiveGenerator, for measuring). The questions index is local mode only for now.
    generator: str = field(default="gemini", metadata={"env": "REGRAG_GENERATOR", "choices": ("gemini", "local")})
    hyde: bool = field(default=False, metadata={"env": "REGRAG_HYDE"})
    hyde_weight: float = field(default=0.5, metadata={"env": "REGRAG_HYDE_WEIGHT", "min": 0.0})
    # the HyDE passage's words as a lexical leg (the question reworded in statute terms); 0 = no such leg
    hyde_lexical_weight: float = field(default=0.0, metadata={"env": "REGRAG_HYDE_LEXICAL_WEIGHT", "min": 0.0})
    hyde_timeout_s: float = field(default=3.0, metadata={"env": "REGRAG_HYDE_TIMEOUT_S", "min": 0.1})
    hyde_cache_size: int = field(default=512, metadata={"env": "REGRAG_HYDE_CACHE_SIZE", "min": 0})
    questions_index: bool = field(default=False, metadata={"env": "REGRAG_QUESTIONS_INDEX"})
    questions_weight: float = field(default=0.5, metadata={"env": "REGRAG_QUESTIONS_WEIGHT", "min": 0.0})
    questions_per_chunk: int = field(default=3, metadata={"env": "REGRAG_QUESTIONS_PER_CHUNK", "min": 1, "max": 10})
    questions_timeout_s: float = field(default=10.0, metadata={"env": "REGRAG_QUESTIONS_TIMEOUT_S", "min": 0.1})
    # OCR of scanned PDFs and page images at ingest (ingest/ingest.py OcrOptions): local = RapidOCR (models in
    # its wheel), documentai = Document AI (REGRAG_DOCUMENTAI_PROCESSOR), off = scans are refused. Unset: local in
    # local mode; in GCP mode documentai when a processor is named, else off (see `ocr_engine`).
    ocr: str | None = field(default=None, metadata={"env": "REGRAG_OCR", "choices": ("local", "documentai", "off")})
    # the processor VERSION (…/processors/ID/processorVersions/V), so every OCR'd page records which model read
    # it and no silent default-version change can happen; terraform output deploy_env prints it
    documentai_processor: str | None = field(
        default=None,
        metadata={
            "env": "REGRAG_DOCUMENTAI_PROCESSOR",
            "pattern": DOCUMENTAI_PROCESSOR_PATTERN,
            "shape": "projects/P/locations/L/processors/ID/processorVersions/V",
        },
    )
    documentai_location: str = field(
        default="us", metadata={"env": "REGRAG_DOCUMENTAI_LOCATION", "choices": DOCUMENTAI_OCR_LOCATIONS}
    )
    documentai_timeout_s: float = field(default=60.0, metadata={"env": "REGRAG_DOCUMENTAI_TIMEOUT_S", "min": 0.1})
    documentai_emulator_host: str | None = field(default=None, metadata={"env": "REGRAG_DOCUMENTAI_EMULATOR_HOST"})
    # limits per document: over one, the document is a recorded permanent failure (never a crash)
    ocr_max_pages: int = field(default=500, metadata={"env": "REGRAG_OCR_MAX_PAGES", "min": 1})
    ocr_max_image_pixels: int = field(
        default=40_000_000, metadata={"env": "REGRAG_OCR_MAX_IMAGE_PIXELS", "min": 10_000}
    )
    ocr_page_timeout_s: float = field(default=60.0, metadata={"env": "REGRAG_OCR_PAGE_TIMEOUT_S", "min": 0.1})
    # an OCR'd page whose mean line confidence is below this is listed as low-confidence, and quotes from it say so
    ocr_low_confidence: float = field(
        default=0.9, metadata={"env": "REGRAG_OCR_LOW_CONFIDENCE", "min": 0.0, "max": 1.0}
    )
    # lines per page read again from their own enlarged crop when read with confidence under 0.8 (a label read
    # at 0.4 would be dropped as noise); each is one more engine call (Document AI: one more request); 0: never
    ocr_max_rereads: int = field(default=12, metadata={"env": "REGRAG_OCR_MAX_REREADS", "min": 0, "max": 200})
    # topics (Pub/Sub topic ids; in local mode, names on the in-process bus)
    topic_chunked: str = field(default="regrag-chunked", metadata={"env": "REGRAG_TOPIC_CHUNKED"})
    topic_embedded: str = field(default="regrag-embedded", metadata={"env": "REGRAG_TOPIC_EMBEDDED"})
    # where the upsert stage (and the scheduled check) publish each alert recorded for a watch (AlertRecorded);
    # empty: alerts are recorded, not published. Locally the in-process bus, which a test or tool can subscribe to.
    topic_alerts: str | None = field(default="regrag-alerts", metadata={"env": "REGRAG_TOPIC_ALERTS"})
    # watches (ingest/alerts.py): a saved question is asked again after a document is stored when the document
    # holds at least this share of its words (0.3 keeps 99.6 % of the documents answers cite: bench/README.md),
    # for at most this many saved questions per document; the others wait for the scheduled check
    watch_min_share: float = field(default=0.3, metadata={"env": "REGRAG_WATCH_MIN_SHARE", "min": 0.0, "max": 1.0})
    watch_max_reasks: int = field(default=20, metadata={"env": "REGRAG_WATCH_MAX_REASKS", "min": 0})
    # the page's public address, for the links back to a document in exports and alert feeds (unset: the address
    # the request came in on; the CLI then writes links relative to the page, e.g. /?doc=…)
    public_url: str | None = field(default=None, metadata={"env": "REGRAG_PUBLIC_URL", "pattern": r"https?://\S+"})
    # Google Cloud (REGRAG_MODE=gcp). Fields marked "gcp": "required" have no default on purpose: gcp_problems()
    # names every missing one in the same ConfigError. REGRAG_EMBEDDER applies to local mode only.
    gcp_project: str | None = field(default=None, metadata={"env": "REGRAG_GCP_PROJECT", "gcp": "required"})
    gcp_region: str | None = field(default=None, metadata={"env": "REGRAG_GCP_REGION", "gcp": "required"})
    bucket: str | None = field(default=None, metadata={"env": "REGRAG_BUCKET", "gcp": "required"})  # uploads
    state_bucket: str | None = field(default=None, metadata={"env": "REGRAG_STATE_BUCKET", "gcp": "required"})
    state_prefix: str = field(default="", metadata={"env": "REGRAG_STATE_PREFIX"})  # chunk map, failures, lexicon
    vertex_index: str | None = field(
        default=None,
        metadata={
            "env": "REGRAG_VERTEX_INDEX",
            "gcp": "required",
            "pattern": r"projects/[^/]+/locations/[^/]+/indexes/[^/]+",
        },
    )
    vertex_index_endpoint: str | None = field(
        default=None,
        metadata={
            "env": "REGRAG_VERTEX_INDEX_ENDPOINT",
            "gcp": "required",
            # the canonical name, with the project NUMBER: FindNeighbors has answered NOT_FOUND to the project-id
            # form, which is what Terraform's `id` attribute gives (infra/outputs.tf builds the number form)
            "pattern": r"projects/[0-9]+/locations/[^/]+/indexEndpoints/[^/]+",
            "hint": "use the project number, not the project id (terraform output deploy_env prints it)",
        },
    )
    vertex_deployed_index_id: str | None = field(
        default=None,
        metadata={"env": "REGRAG_VERTEX_DEPLOYED_INDEX_ID", "gcp": "required", "pattern": r"[A-Za-z][A-Za-z0-9_]*"},
    )
    # the index endpoint's public domain (…vdb.vertexai.goog): FindNeighbors is served there, not regionally
    vertex_public_host: str | None = field(
        default=None, metadata={"env": "REGRAG_VERTEX_PUBLIC_HOST", "gcp": "required"}
    )
    vertex_api_host: str | None = field(default=None, metadata={"env": "REGRAG_VERTEX_API_HOST"})  # default: regional
    vertex_batch_size: int = field(default=100, metadata={"env": "REGRAG_VERTEX_BATCH_SIZE", "min": 1, "max": 1000})
    vertex_timeout_s: float = field(default=20.0, metadata={"env": "REGRAG_VERTEX_TIMEOUT_S", "min": 0.1})
    # multilingual, evaluated on Chinese (text-embedding-005 is English-only); 768 dims, up to 250 texts a request
    embedding_model: str = field(default="text-multilingual-embedding-002", metadata={"env": "REGRAG_EMBEDDING_MODEL"})
    embedding_dimension: int = field(default=0, metadata={"env": "REGRAG_EMBEDDING_DIMENSION", "min": 0})  # 0: native
    embed_timeout_s: float = field(default=30.0, metadata={"env": "REGRAG_EMBED_TIMEOUT_S", "min": 0.1})
    embed_max_attempts: int = field(default=5, metadata={"env": "REGRAG_EMBED_MAX_ATTEMPTS", "min": 1, "max": 10})
    embed_backoff_s: float = field(default=0.5, metadata={"env": "REGRAG_EMBED_BACKOFF_S", "min": 0.0})
    embed_max_texts: int = field(default=250, metadata={"env": "REGRAG_EMBED_MAX_TEXTS", "min": 1, "max": 250})
    embed_max_tokens: int = field(default=20000, metadata={"env": "REGRAG_EMBED_MAX_TOKENS", "min": 1, "max": 20000})
    gcs_timeout_s: float = field(default=30.0, metadata={"env": "REGRAG_GCS_TIMEOUT_S", "min": 0.1})
    pubsub_timeout_s: float = field(default=30.0, metadata={"env": "REGRAG_PUBSUB_TIMEOUT_S", "min": 0.1})
    # the event subscriptions' max delivery attempts (deploy.sh MAX_DELIVERY_ATTEMPTS): the failure that reaches it
    # is recorded as a dead letter (stage, document, error) under failures/ in the state bucket
    max_delivery_attempts: int = field(
        default=5, metadata={"env": "REGRAG_MAX_DELIVERY_ATTEMPTS", "min": 5, "max": 100}
    )
    chunkmap_cache_s: float = field(default=30.0, metadata={"env": "REGRAG_CHUNKMAP_CACHE_S", "min": 0.0})
    lexicon_refresh_s: float = field(default=600.0, metadata={"env": "REGRAG_LEXICON_REFRESH_S", "min": 0.0})
    # Anserini's BM25 defaults; they beat 1.2/0.75 on the dev set (see bench/README.md)
    bm25_k1: float = field(default=0.9, metadata={"env": "REGRAG_BM25_K1", "min": 0.0})
    bm25_b: float = field(default=0.4, metadata={"env": "REGRAG_BM25_B", "min": 0.0, "max": 1.0})
    # GCP only (Vertex sparse weights are written once): the sample corpus averages 198 terms (words + characters)
    bm25_avgdl: float = field(default=198.0, metadata={"env": "REGRAG_BM25_AVGDL", "min": 1.0})
    gemini_key_ref: str | None = field(default=None, metadata={"env": "REGRAG_GEMINI_SECRET"})  # Secret Manager id
    # emulators and test fakes only (plaintext, no credentials); never set in production
    vertex_emulator_host: str | None = field(default=None, metadata={"env": "REGRAG_VERTEX_EMULATOR_HOST"})
    embeddings_emulator_url: str | None = field(default=None, metadata={"env": "REGRAG_EMBEDDINGS_EMULATOR_URL"})
    key_store_emulator_host: str | None = field(default=None, metadata={"env": "REGRAG_SECRETMANAGER_EMULATOR_HOST"})
    # `regrag serve`: questions answered at once, questions waiting for a turn (and for how long) before the
    # server answers 503 with Retry-After (regrag.api.server)
    serve_max_active: int = field(default=2, metadata={"env": "REGRAG_SERVE_MAX_ACTIVE", "min": 1, "max": 64})
    serve_max_waiting: int = field(default=192, metadata={"env": "REGRAG_SERVE_MAX_WAITING", "min": 0, "max": 4096})
    serve_wait_s: float = field(default=2.5, metadata={"env": "REGRAG_SERVE_WAIT_S", "min": 0.0, "max": 60.0})
    # the citation check (POST /check, regrag check): the largest upload or JSON body, the characters of text and
    # the provisions one document may bring (regrag.check.run); over a limit the answer is a 413 or 400 naming it
    check_max_bytes: int = field(
        default=20_000_000, metadata={"env": "REGRAG_CHECK_MAX_BYTES", "min": 1000, "max": 60_000_000}
    )
    check_max_chars: int = field(default=2_000_000, metadata={"env": "REGRAG_CHECK_MAX_CHARS", "min": 1000})
    check_max_citations: int = field(default=20_000, metadata={"env": "REGRAG_CHECK_MAX_CITATIONS", "min": 1})
    log_level: str = field(
        default="INFO", metadata={"env": "LOG_LEVEL", "choices": ("DEBUG", "INFO", "WARNING", "ERROR")}
    )
    # questions can carry personal data: ERROR log lines redact them unless this is on (regrag.logs)
    log_questions: bool = field(default=False, metadata={"env": "REGRAG_LOG_QUESTIONS"})

    @property
    def index_path(self) -> Path:
        return self.data_dir / "index.sqlite"

    @property
    def bucket_path(self) -> Path:
        return self.bucket_dir if self.bucket_dir is not None else self.data_dir / "bucket"

    @property
    def vector_cache_path(self) -> Path:
        return self.vector_cache if self.vector_cache is not None else self.data_dir / "vector-cache.sqlite"

    @property
    def failures_path(self) -> Path:
        return self.data_dir / "failures.jsonl"

    @property
    def gemini_on_vertex(self) -> bool:
        """Reach Gemini through Vertex AI (service account, no key): REGRAG_GEMINI_VERTEX, else the default for
        the mode. The Gemini API refuses some regions ("User location is not supported"); Vertex AI does not."""
        if self.gemini_vertex is not None:
            return self.gemini_vertex
        return self.mode == "gcp" and not (self.gemini_api_key or self.gemini_key_ref)

    @property
    def gemini_params(self) -> GenerationParams:
        """What every Gemini request carries (temperature, thinking): only what the model's row says it takes."""
        return generation_params(self.gemini_model, self.gemini_temperature, self.gemini_thinking_level)

    @property
    def ocr_engine(self) -> str:
        """The OCR engine to wire: REGRAG_OCR, or its default for the mode (local; documentai when a processor
        is named in GCP mode, else off)."""
        if self.ocr is not None:
            return self.ocr
        if self.mode == "gcp":
            return "documentai" if self.documentai_processor else "off"
        return "local"

    @property
    def allowed_origins(self) -> frozenset[str]:
        """REGRAG_CORS_ORIGINS as a set of origins (scheme://host[:port]), or {"*"}."""
        return frozenset(o.strip().rstrip("/") for o in (self.cors_origins or "").split(",") if o.strip())

    @property
    def admin_principal_emails(self) -> frozenset[str]:
        """REGRAG_ADMIN_PRINCIPALS as lower-case emails (emails compare case-insensitively)."""
        return frozenset(p.strip().lower() for p in (self.admin_principals or "").split(",") if p.strip())

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: Any) -> Settings:
        """Parse settings from an environment mapping; raise ConfigError naming every bad variable."""
        values: dict[str, Any] = {}
        problems: list[str] = []
        for f in fields(cls):
            env = f.metadata.get("env")
            if f.name in overrides:
                values[f.name] = overrides[f.name]
                continue
            if not env or env not in environ:
                continue
            raw = environ[env]
            try:
                values[f.name] = _convert(f, raw)
            except ValueError as exc:
                problems.append(f"{env}={'<hidden>' if f.metadata.get('secret') else raw!r}: {exc}")
        problems.extend(gcp_problems(values))
        problems.extend(gemini_problems(values))
        problems.extend(ocr_problems(values))
        if problems:
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
        return cls(**values)

    def redacted(self) -> dict[str, Any]:
        """Settings for evaluation reports (ops/evaluation.py context): secrets replaced by whether they are set."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = (
                ("<set>" if value else None)
                if f.metadata.get("secret")
                else (str(value) if isinstance(value, Path) else value)
            )
        return out


def gcp_problems(values: Mapping[str, Any]) -> list[str]:
    """With mode gcp: one line naming every missing required variable, one per malformed resource name."""
    if values.get("mode", "local") != "gcp":
        return []
    problems: list[str] = []
    required = [f for f in fields(Settings) if f.metadata.get("gcp") == "required"]
    missing = [f.metadata["env"] for f in required if not values.get(f.name)]
    if missing:
        problems.append(f"REGRAG_MODE=gcp needs {', '.join(missing)} (no defaults: each names a real resource)")
    for f in fields(Settings):
        value, pattern = values.get(f.name), f.metadata.get("pattern")
        if pattern and value and not re.fullmatch(pattern, str(value)):
            hint = f" ({f.metadata['hint']})" if "hint" in f.metadata else ""
            shape = f.metadata.get("shape", pattern)  # a readable form where the pattern has named groups
            problems.append(f"{f.metadata['env']}={value!r}: expected {shape}{hint}")
    return problems


def gemini_problems(values: Mapping[str, Any]) -> list[str]:
    """A Gemini model the table in cloud_facts.py does not know, or a thinking level or temperature it does not
    take: refused here, once, rather than by a 400 (every rerank falling back) or a silently ignored value."""
    model_id = str(values.get("gemini_model", Settings.gemini_model))
    model = gemini_model(model_id)
    if model is None:
        return [
            f"REGRAG_GEMINI_MODEL={model_id!r} is not in regrag's table of documented models "
            f"({', '.join(GEMINI_MODELS)}): add its row to shared/regrag/cloud_facts.py (temperature, thinking "
            "levels, retirement, from its model page) before using it"
        ]
    temperature = float(values.get("gemini_temperature", Settings.gemini_temperature))
    problems: list[str] = []
    low, high = model.temperature_range or (0.0, 2.0)
    if not low <= temperature <= high:
        problems.append(f"REGRAG_GEMINI_TEMPERATURE={temperature:g}: {model_id} takes {low:g}–{high:g}")
    try:
        generation_params(model_id, temperature, values.get("gemini_thinking_level"))
    except ValueError as exc:
        problems.append(f"REGRAG_GEMINI_THINKING_LEVEL: {exc}")
    return problems


def ocr_problems(values: Mapping[str, Any]) -> list[str]:
    """Document AI named without a processor version, or a processor outside REGRAG_DOCUMENTAI_LOCATION."""
    processor = values.get("documentai_processor")
    if values.get("ocr") == "documentai" and not processor:
        return [
            "REGRAG_OCR=documentai needs REGRAG_DOCUMENTAI_PROCESSOR "
            "(projects/P/locations/L/processors/ID/processorVersions/V)"
        ]
    location = values.get("documentai_location", "us")
    match = re.fullmatch(DOCUMENTAI_PROCESSOR_PATTERN, str(processor or ""))
    if processor and match is None and values.get("mode", "local") != "gcp":  # gcp_problems checks the pattern
        return [
            f"REGRAG_DOCUMENTAI_PROCESSOR={processor!r}: expected "
            "projects/P/locations/L/processors/ID/processorVersions/V (the version each OCR'd page records)"
        ]
    if match and match.group("location") != location:
        return [
            f"REGRAG_DOCUMENTAI_PROCESSOR is in location {match.group('location')!r} but REGRAG_DOCUMENTAI_LOCATION "
            f"is {location!r} (the processor's region picks the endpoint)"
        ]
    return []


def _convert(f: Any, raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    optional = "None" in kind
    base = kind.replace("| None", "").replace("None |", "").strip()
    raw = raw.strip()
    if optional and raw == "":
        return None
    if base == "bool":
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError("expected true/false")
    if base == "int":
        value: Any = int(raw)
    elif base == "float":
        value = float(raw)
    elif base == "Path":
        return Path(raw)
    else:
        value = raw
    choices = f.metadata.get("choices")
    if choices and value not in choices:
        raise ValueError(f"expected one of {', '.join(choices)}")
    if "min" in f.metadata and value < f.metadata["min"]:
        raise ValueError(f"must be ≥ {f.metadata['min']}")
    if "max" in f.metadata and value > f.metadata["max"]:
        raise ValueError(f"must be ≤ {f.metadata['max']}")
    return value
