# Everyday verbs. `make run` and `make test` set up everything they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080
SAMPLE := shared/sample_corpus
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run ingest serve test test-fast lint fmt typecheck bench eval browser-deps emulator-deps clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamps re-run the installs only when the pins change.
$(VENV)/.runtime: $(BIN)/python requirements.txt pyproject.toml
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	@touch $@

## run: ingest the sample corpus (ingest → embed → upsert) and serve the API and the page on $(HOST):$(PORT)
run: ingest
	@echo "open http://$(HOST):$(PORT)/   (API: POST /query, /rerank, /compose; GET /healthz)"
	$(BIN)/regrag serve --host $(HOST) --port $(PORT)

ingest: $(VENV)/.runtime
	$(BIN)/regrag ingest $(SAMPLE)

serve: $(VENV)/.runtime
	$(BIN)/regrag serve --host $(HOST) --port $(PORT)

## test: install what the tests need (venv, pip, browser, emulators) and run the whole suite
test: $(VENV)/.dev browser-deps emulator-deps
	$(BIN)/python -m pytest

test-fast: $(VENV)/.dev
	$(BIN)/python -m pytest -m "not slow and not emulator and not browser"

browser-deps:
	@bash tests/browser/install.sh

emulator-deps:
	@bash tests/gcp/install.sh

lint: $(VENV)/.dev
	$(BIN)/ruff check shared tests functions bench
	$(BIN)/ruff format --check shared tests functions bench
	$(BIN)/mypy
	PYTHONPATH=shared $(BIN)/lint-imports

fmt: $(VENV)/.dev
	$(BIN)/ruff format shared tests functions bench
	$(BIN)/ruff check --fix shared tests functions bench

typecheck: $(VENV)/.dev
	$(BIN)/mypy

## bench: ingest throughput and query latency (needs ../shared/corpus; see bench/README.md)
bench: $(VENV)/.dev
	$(BIN)/python bench/ingest_corpus.py
	$(BIN)/python bench/query_latency.py

eval: $(VENV)/.runtime
	$(BIN)/regrag eval ../shared/eval/dev.jsonl

clean:
	rm -rf $(VENV) .regrag build .pytest_cache .mypy_cache .ruff_cache node_modules
