"""Settings: parsed once from the environment into a frozen dataclass; every problem reported in one error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """The environment does not describe a runnable configuration; the message lists every problem."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


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
    rrf_k: int = field(default=60, metadata={"env": "REGRAG_RRF_K", "min": 1})
    dense_weight: float = field(default=1.0, metadata={"env": "REGRAG_DENSE_WEIGHT", "min": 0.0})
    lexical_weight: float = field(default=1.0, metadata={"env": "REGRAG_LEXICAL_WEIGHT", "min": 0.0})
    title_weight: float = field(default=0.5, metadata={"env": "REGRAG_TITLE_WEIGHT", "min": 0.0})
    corpus_timeout_s: float = field(default=3.0, metadata={"env": "REGRAG_CORPUS_TIMEOUT_S", "min": 0.05})
    query_cache_size: int = field(default=2048, metadata={"env": "REGRAG_QUERY_CACHE_SIZE", "min": 0})
    admin_token: str | None = field(default=None, repr=False, metadata={"env": "REGRAG_ADMIN_TOKEN", "secret": True})
    # rerank
    rerank: bool = field(default=True, metadata={"env": "RERANK"})
    rerank_top_n: int = field(default=5, metadata={"env": "REGRAG_RERANK_TOP_N", "min": 1})
    rerank_timeout_s: float = field(default=4.0, metadata={"env": "REGRAG_RERANK_TIMEOUT_S", "min": 0.1})
    gemini_api_key: str | None = field(default=None, repr=False, metadata={"env": "GEMINI_API_KEY", "secret": True})
    gemini_model: str = field(default="gemini-2.5-flash", metadata={"env": "REGRAG_GEMINI_MODEL"})
    rerank_cache_size: int = field(default=256, metadata={"env": "REGRAG_RERANK_CACHE_SIZE", "min": 0})
    # where Gemini is reached: the Gemini API (key) unless Vertex AI mode (project, location, service account)
    gemini_base_url: str | None = field(default=None, metadata={"env": "REGRAG_GEMINI_BASE_URL"})
    gemini_vertex: bool = field(default=False, metadata={"env": "REGRAG_GEMINI_VERTEX"})
    gemini_project: str | None = field(default=None, metadata={"env": "REGRAG_GEMINI_PROJECT"})
    gemini_location: str = field(default="global", metadata={"env": "REGRAG_GEMINI_LOCATION"})
    # compose
    compose_top_n: int = field(default=5, metadata={"env": "REGRAG_COMPOSE_TOP_N", "min": 1})
    max_bullets: int = field(default=4, metadata={"env": "REGRAG_MAX_BULLETS", "min": 1})
    relevance_floor: float = field(default=0.25, metadata={"env": "REGRAG_RELEVANCE_FLOOR", "min": 0.0, "max": 1.0})
    # topics (Pub/Sub topic ids; in local mode, names on the in-process bus)
    topic_chunked: str = field(default="regrag-chunked", metadata={"env": "REGRAG_TOPIC_CHUNKED"})
    topic_embedded: str = field(default="regrag-embedded", metadata={"env": "REGRAG_TOPIC_EMBEDDED"})
    log_level: str = field(
        default="INFO", metadata={"env": "LOG_LEVEL", "choices": ("DEBUG", "INFO", "WARNING", "ERROR")}
    )

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
        if problems:
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
        return cls(**values)

    def redacted(self) -> dict[str, Any]:
        """Settings for logs and /admin: secrets replaced by whether they are set."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = (
                ("<set>" if value else None)
                if f.metadata.get("secret")
                else (str(value) if isinstance(value, Path) else value)
            )
        return out


def _convert(f: Any, raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    raw = raw.strip()
    if kind == "bool":
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError("expected true/false")
    if kind == "int":
        value: Any = int(raw)
    elif kind == "float":
        value = float(raw)
    elif "Path" in kind:
        return Path(raw) if raw else None
    elif "None" in kind:
        return raw or None
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
