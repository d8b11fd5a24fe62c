"""The table of cloud facts (shared/regrag/cloud_facts.py) and its twin for people (infra/README.md "Cloud facts")
say the same, row by row, so that a model change reviewed in one is not silently different in the other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regrag.cloud_facts import (
    DOCUMENTAI_OCR_LOCATIONS,
    GEMINI_MODELS,
    HONOURED,
    THINKING_LEVELS,
    GeminiModel,
)
from regrag.config import Settings

README = Path(__file__).resolve().parents[2] / "infra" / "README.md"


def gemini_rows() -> dict[str, list[str]]:
    """model id → its cells in the README's Gemini table (the rows whose first cell is a `gemini-…` id)."""
    section = README.read_text(encoding="utf-8").split("## Cloud facts the deployment relies on", 1)[1]
    rows = {}
    for line in section.split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.match(r"`(gemini-[^`]+)`", cells[0]) if len(cells) == 6 else None
        if match:
            rows[match.group(1)] = cells
    return rows


def test_the_readme_lists_every_model_of_the_table_and_no_other():
    assert sorted(gemini_rows()) == sorted(GEMINI_MODELS)


@pytest.mark.parametrize("model", GEMINI_MODELS.values(), ids=lambda m: m.model_id)
def test_each_readme_row_says_what_the_table_says(model: GeminiModel):
    _, temperature, thinking, released, retires, pages = gemini_rows()[model.model_id]
    assert temperature.startswith(model.temperature)
    if model.temperature == HONOURED:
        low, high = model.temperature_range or (None, None)
        assert f"{low:.1f}–{high:.1f}" in temperature
    if model.thinking_levels:
        assert (
            thinking.startswith(", ".join(model.thinking_levels)) and f"(default {model.default_thinking})" in thinking
        )
    else:
        assert thinking.startswith("—") and ("thinkingBudget 0" in thinking) == model.thinking_budget_off
    assert released == model.released.isoformat() and retires == model.retirement()
    assert all(source in pages for source in model.sources)


def test_the_default_model_honours_temperature_and_is_marked_in_the_readme():
    default = GEMINI_MODELS[Settings().gemini_model]
    assert default.temperature == HONOURED and default.temperature_range == (0.0, 2.0)
    assert "(default)" in gemini_rows()[default.model_id][0]
    assert Settings().gemini_params.temperature == 0.1 and Settings().gemini_params.thinking_level == "MINIMAL"


def test_thinking_levels_are_the_api_enum_lowest_first():
    for model in GEMINI_MODELS.values():
        assert list(model.thinking_levels) == [level for level in THINKING_LEVELS if level in model.thinking_levels]


def test_the_readme_names_the_document_ai_ocr_locations_of_the_table():
    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| Document AI OCR locations |"))
    assert re.findall(r"`([a-z0-9-]+)`", row.split("|")[2]) == [*DOCUMENTAI_OCR_LOCATIONS, "europe-west4"]
