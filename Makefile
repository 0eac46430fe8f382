# `make run` and `make test` each set everything up from nothing: the virtual environment, the
# package, and the system packages (graphviz, ZooKeeper) when they are missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PRESET ?= default
# The grid of small scopes swept after the preset, as the CI gate does (docs/sweep.md); `make run
# GRID=` checks the preset alone.
GRID ?= gate
PYTEST_ARGS ?=
# The model and the explorer compiled with Cython (kcm/compiled.py): rebuilt when a source changed;
# until then the edited module runs from its .py file.
COMPILED := build/compiled/manifest.json

.PHONY: run test lint bench docs diagrams sysdeps sysdeps-run clean

run: $(VENV)/.installed $(COMPILED) sysdeps-run
	$(BIN)/kcm check --preset $(PRESET) $(if $(GRID),--grid $(GRID)) --diagrams docs/diagrams

# The suite runs compiled; the mutation tests, which trace the model's source lines, run in a
# second pass from source (marked `pure_only` by tests/conftest.py). The lint gate runs first.
test: lint $(COMPILED) sysdeps
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	KCM_PURE=1 $(BIN)/python -m pytest $(PYTEST_ARGS) -m pure_only

# The style and type gate (pyproject.toml: [tool.ruff], [tool.mypy]): ruff over the repository,
# then mypy on the import package `kcm`. Its folders (model/, impl/, checker/, spark_explore/ and
# kcm/ itself) are joined into one package by setuptools' package-dir, which mypy cannot follow
# through the editable install's import hook: TYPECHECK links them into one folder, made afresh,
# and mypy starts without a cache (one kept across runs of new links can go stale; a cold run is seconds).
TYPECHECK := build/typecheck/kcm
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	rm -rf $(TYPECHECK) build/mypy-cache && mkdir -p $(TYPECHECK)
	for f in kcm/*; do [ "$${f##*/}" = __pycache__ ] || ln -s ../../../$$f $(TYPECHECK)/; done
	for d in model impl checker spark_explore; do ln -s ../../../$$d $(TYPECHECK)/$$d; done
	$(BIN)/mypy

bench: $(VENV)/.installed-dev $(COMPILED) sysdeps-run
	$(BIN)/python bench/run_all.py

diagrams docs: $(VENV)/.installed sysdeps-run
	$(BIN)/kcm diagram tables --format dot --format svg --out docs/diagrams
	$(BIN)/kcm diagram reachable --preset tiny --format dot --format svg --out docs/diagrams

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools 2>/dev/null

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q -e . 2> >(grep -v "^WARNING: Location" >&2)
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install -q -e '.[dev]' 2> >(grep -v "^WARNING: Location" >&2)
	touch $@

$(VENV)/.installed-compile: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install -q -e '.[compile]' 2> >(grep -v "^WARNING: Location" >&2)
	touch $@

$(COMPILED): $(VENV)/.installed-compile kcm/compiled.py $(wildcard model/*.py model/*/*.py) checker/engine/bfs.py spark_explore/level.py
	KCM_PURE=1 $(BIN)/python -c 'import sys, kcm.compiled; sys.exit(kcm.compiled.build())'

# graphviz's `dot` renders the diagrams; ZooKeeper runs the implementation's integration tests;
# headless Chromium opens report.html in the tests.
sysdeps-run:
	@bash scripts/sysdeps.sh graphviz

sysdeps:
	@bash scripts/sysdeps.sh graphviz zookeeper chromium

clean:
	rm -rf $(VENV) build kcm-out .pytest_cache .hypothesis
