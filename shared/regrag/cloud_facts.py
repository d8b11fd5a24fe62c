"""What Google documents about the models and services the deployment relies on, one row per model, each with
the pages it came from (read 2026-11). A model change is a reviewed change of one row here.

Read by the settings (which model, temperature and thinking level are allowed), by the Gemini request builder
(which parameters are sent), by `regrag doctor` (what it warns about), and by the Gemini wire fake in the tests
(what it rejects). infra/README.md "Cloud facts" is the same table for people; a test checks the two agree.

Temperature, per model, is one of three things:
- honoured: the model page lists a temperature range; the configured value is sent.
- ignored: the model page says custom temperature (top-K, top-P) values are not supported and are ignored;
  nothing is sent, and the model samples at its default, so the same prompt can get different answers.
- undocumented: no page read says either way; the value is sent (the API accepts the field for every Gemini
  model) and `regrag doctor` checks determinism by asking the same question twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

# the design's temperature for every Gemini call (rerank scores 1–10 as JSON): low, so a question scores the same
# twice; sent only where honoured
DEFAULT_TEMPERATURE = 0.1
# thinkingLevel values, lowest first (the GenerateContent API's ThinkingLevel enum)
THINKING_LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH")

HONOURED, IGNORED, UNDOCUMENTED = "honoured", "ignored", "undocumented"

_AGENT_PLATFORM = "https://docs.cloud.google.com/gemini-enterprise-agent-platform/models"
MODEL_VERSIONS_PAGE = f"{_AGENT_PLATFORM}/model-versions"
GEMINI_API_DEPRECATIONS_PAGE = "https://ai.google.dev/gemini-api/docs/deprecations"
GEMINI_API_CHANGELOG_PAGE = "https://ai.google.dev/gemini-api/docs/changelog"


@dataclass(frozen=True)
class GeminiModel:
    """What the pages say about one Gemini model on Vertex AI (Gemini Enterprise Agent Platform).

    Attributes:
        model_id: the id requests name.
        temperature: HONOURED, IGNORED or UNDOCUMENTED (see the module docstring).
        temperature_range: the documented range when HONOURED.
        thinking_levels: the thinkingLevel values the model accepts, lowest first; () when it takes none.
        default_thinking: the level the model uses when none is sent (None: not documented or not applicable).
        thinking_budget_off: the model switches thinking off with thinkingBudget 0 (Gemini 2.5 Flash, Flash-Lite).
        released: release date.
        retires: the documented retirement date on Vertex AI (None: none announced).
        retires_or_later: the date is the earliest one ("… or later"), not a fixed one.
        sources: the pages each fact came from.
        note: what else a reviewer should know.
    """

    model_id: str
    temperature: str
    temperature_range: tuple[float, float] | None
    thinking_levels: tuple[str, ...]
    default_thinking: str | None
    thinking_budget_off: bool
    released: date
    retires: date | None
    retires_or_later: bool
    sources: tuple[str, ...]
    note: str = ""

    @property
    def lowest_thinking(self) -> str | None:
        """The lowest thinking level the model accepts (the reranker's: a short JSON scoring task)."""
        return self.thinking_levels[0] if self.thinking_levels else None

    def retirement(self) -> str:
        """The retirement date as the page gives it."""
        if self.retires is None:
            return "none announced"
        return f"{self.retires.isoformat()}{' or later' if self.retires_or_later else ''}"


_FOUR_LEVELS = THINKING_LEVELS
_THREE_LEVELS = ("LOW", "MEDIUM", "HIGH")

GEMINI_MODELS: Mapping[str, GeminiModel] = {
    m.model_id: m
    for m in (
        GeminiModel(
            "gemini-3.1-flash-lite",
            HONOURED,
            (0.0, 2.0),
            _FOUR_LEVELS,
            "MINIMAL",
            False,
            date(2026, 5, 7),
            date(2027, 5, 7),
            True,
            (
                f"{_AGENT_PLATFORM}/gemini/3-1-flash-lite",  # temperature 0.0–2.0 (default 1.0), topK 64 fixed
                f"{_AGENT_PLATFORM}/guides/gemini-3-5-flash",  # thinking levels MINIMAL…HIGH, default MINIMAL
                MODEL_VERSIONS_PAGE,
            ),
        ),
        GeminiModel(
            "gemini-3.5-flash-lite",
            IGNORED,
            None,
            _FOUR_LEVELS,
            "MINIMAL",
            False,
            date(2026, 7, 21),
            date(2027, 7, 21),
            True,
            (f"{_AGENT_PLATFORM}/gemini/3-5-flash-lite", MODEL_VERSIONS_PAGE),
            "potentially breaking changes: custom temperature, top-K and top-P values are ignored; custom "
            "frequency and presence penalties are an error",
        ),
        GeminiModel(
            "gemini-3.5-flash",
            UNDOCUMENTED,
            None,
            _FOUR_LEVELS,
            "MEDIUM",
            False,
            date(2026, 5, 19),
            date(2027, 5, 19),
            True,
            (f"{_AGENT_PLATFORM}/guides/gemini-3-5-flash", MODEL_VERSIONS_PAGE, GEMINI_API_CHANGELOG_PAGE),
            "the Gemini API (key) routes gemini-3.5-flash to gemini-3.6-flash since 2026-10-08",
        ),
        GeminiModel(
            "gemini-3.6-flash",
            UNDOCUMENTED,
            None,
            _FOUR_LEVELS,
            "MEDIUM",
            False,
            date(2026, 7, 21),
            None,
            False,
            (f"{_AGENT_PLATFORM}/guides/gemini-3-7-flash", GEMINI_API_DEPRECATIONS_PAGE),
        ),
        GeminiModel(
            "gemini-3.7-flash",
            UNDOCUMENTED,
            None,
            _THREE_LEVELS,
            "MEDIUM",
            False,
            date(2026, 8, 13),
            None,
            False,
            (f"{_AGENT_PLATFORM}/guides/gemini-3-7-flash", GEMINI_API_DEPRECATIONS_PAGE, GEMINI_API_CHANGELOG_PAGE),
            "no MINIMAL level; the Gemini API (key) routes gemini-3.7-flash to gemini-3.8-flash since 2026-10-08",
        ),
        GeminiModel(
            "gemini-3.8-flash",
            UNDOCUMENTED,
            None,
            _THREE_LEVELS,
            "MEDIUM",
            False,
            date(2026, 9, 2),
            None,
            False,
            (f"{_AGENT_PLATFORM}/guides/gemini-3-8-flash", GEMINI_API_DEPRECATIONS_PAGE),
            "no MINIMAL level (a third-party release note, github.com/dzivkovi/video-intel v2.7.1, reports a 400 "
            "for it); the Gemini API names it gemini-2.5-pro's replacement",
        ),
        GeminiModel(
            "gemini-2.5-flash",
            UNDOCUMENTED,
            None,
            (),
            None,
            True,
            date(2025, 6, 17),
            date(2026, 10, 16),
            False,
            (MODEL_VERSIONS_PAGE,),
            "retired on Vertex AI; the page names gemini-3.5-flash-lite or gemini-3.1-flash-lite as replacement",
        ),
        GeminiModel(
            "gemini-2.5-flash-lite",
            UNDOCUMENTED,
            None,
            (),
            None,
            True,
            date(2025, 7, 22),
            date(2026, 10, 16),
            False,
            (MODEL_VERSIONS_PAGE,),
            "retired on Vertex AI; the page names gemini-3.1-flash-lite as replacement",
        ),
        GeminiModel(
            "gemini-2.5-pro",
            UNDOCUMENTED,
            None,
            (),
            None,
            False,
            date(2025, 6, 17),
            date(2026, 10, 16),
            False,
            (MODEL_VERSIONS_PAGE,),
            "retired on Vertex AI; cannot switch thinking off (a thinkingBudget of 0 is refused)",
        ),
    )
}


def gemini_model(model_id: str) -> GeminiModel | None:
    """The row for a model id (a `models/` or `publishers/google/models/` prefix is ignored), None if unknown."""
    return GEMINI_MODELS.get(model_id.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class GenerationParams:
    """The sampling and thinking parameters a Gemini request carries; None: the field is not sent."""

    temperature: float | None
    thinking_level: str | None = None
    thinking_budget: int | None = None

    def thinking_config(self) -> dict[str, object] | None:
        """The `ThinkingConfig` fields, or None for no thinking config."""
        if self.thinking_level is not None:
            return {"thinking_level": self.thinking_level}
        if self.thinking_budget is not None:
            return {"thinking_budget": self.thinking_budget}
        return None

    def describe(self) -> str:
        """What is sent, for logs and the doctor: `temperature 0.1, thinking LOW`."""
        temperature = "temperature not sent" if self.temperature is None else f"temperature {self.temperature:g}"
        if self.thinking_level is not None:
            thinking = f"thinking {self.thinking_level}"
        elif self.thinking_budget is not None:
            thinking = f"thinking budget {self.thinking_budget}"
        else:
            thinking = "no thinking config"
        return f"{temperature}, {thinking}"


def generation_params(model_id: str, temperature: float, thinking_level: str | None = None) -> GenerationParams:
    """The parameters to send to `model_id`: only those its row says it takes.

    Temperature is left out for a model documented to ignore it; the thinking level is `thinking_level`, or
    the lowest the model lists; a Gemini 2.5 Flash model gets thinkingBudget 0 (thinking off). A model that
    is not in the table gets the temperature and no thinking config (the settings refuse such a model; this
    path serves direct users of the generator, such as the contract tests).

    Raises:
        ValueError: `thinking_level` is not one the model lists.
    """
    model = gemini_model(model_id)
    if model is None:
        return GenerationParams(temperature)
    sent_temperature = None if model.temperature == IGNORED else temperature
    if model.thinking_levels:
        level = thinking_level or model.lowest_thinking
        if level not in model.thinking_levels:
            raise ValueError(f"{model.model_id} takes thinking levels {', '.join(model.thinking_levels)}, not {level}")
        return GenerationParams(sent_temperature, thinking_level=level)
    if thinking_level is not None:
        raise ValueError(f"{model.model_id} takes no thinking level")
    return GenerationParams(sent_temperature, thinking_budget=0 if model.thinking_budget_off else None)


# --- Vertex AI text embeddings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddingModel:
    """A Vertex AI text-embedding model: native vector size and the longest text it reads."""

    model_id: str
    dimensions: int
    max_tokens_per_text: int
    sources: tuple[str, ...]


_EMBEDDINGS_API = "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api"
EMBEDDING_MODELS: Mapping[str, EmbeddingModel] = {
    m.model_id: m
    for m in (
        EmbeddingModel("text-multilingual-embedding-002", 768, 2048, (_EMBEDDINGS_API,)),
        EmbeddingModel("text-embedding-005", 768, 2048, (_EMBEDDINGS_API,)),  # English and code only
        EmbeddingModel("gemini-embedding-001", 3072, 2048, (_EMBEDDINGS_API,)),
    )
}
EMBED_MAX_TEXTS_PER_REQUEST = 250  # "each request is limited to 250 input texts"
EMBED_MAX_TOKENS_PER_REQUEST = 20_000  # "the API has a maximum input token limit of 20,000"
EMBEDDINGS_LIMITS_PAGE = "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings"

# --- Document AI ------------------------------------------------------------------------------------------

DOCUMENTAI_REGIONS_PAGE = "https://docs.cloud.google.com/document-ai/docs/regions"
# Where an Enterprise Document OCR processor can live: the multi-regions, then the single regions the OCR table
# of the regions page lists (single regions are "limited support"; europe-west4 is a Document AI region but has
# no OCR row). The processor's location picks the endpoint, {location}-documentai.googleapis.com.
DOCUMENTAI_OCR_LOCATIONS = (
    "us",
    "eu",
    "asia-south1",
    "asia-southeast1",
    "australia-southeast1",
    "europe-west2",
    "europe-west3",
    "northamerica-northeast1",
)
DOCUMENTAI_VERSIONS_PAGE = "https://docs.cloud.google.com/document-ai/docs/manage-processor-versions"
# projects/P/locations/L/processors/ID/processorVersions/V: a request names the version, so the one that read a
# page is known (a stable version is deprecated six months after a newer one is released)
DOCUMENTAI_PROCESSOR_PATTERN = (
    r"projects/(?P<project>[^/]+)/locations/(?P<location>[a-z0-9-]+)/processors/(?P<processor>[^/]+)"
    r"/processorVersions/(?P<version>[^/]+)"
)
