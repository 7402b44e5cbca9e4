# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamps: reinstall only when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/prdigest demo

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/report_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info
