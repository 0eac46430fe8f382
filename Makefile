# `make run` and `make test` each set everything up from nothing: the virtual environment, the
# package, and the system packages (graphviz, ZooKeeper) when they are missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PRESET ?= default
PYTEST_ARGS ?=

.PHONY: run test bench docs diagrams sysdeps sysdeps-run clean

run: $(VENV)/.installed sysdeps-run
	$(BIN)/kcm check --preset $(PRESET) --diagrams docs/diagrams

test: $(VENV)/.installed-dev sysdeps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-dev sysdeps-run
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

# graphviz's `dot` renders the diagrams; ZooKeeper runs the implementation's integration tests;
# headless Chromium opens report.html in the tests.
sysdeps-run:
	@bash scripts/sysdeps.sh graphviz

sysdeps:
	@bash scripts/sysdeps.sh graphviz zookeeper chromium

clean:
	rm -rf $(VENV) kcm-out .pytest_cache .hypothesis
