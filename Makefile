# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint lock bench clean

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

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The Docker image's pinned dependencies (needs uv: `pip install uv`).
lock:
	@command -v uv >/dev/null || { echo "make lock needs uv: pip install uv"; exit 1; }
	uv pip compile pyproject.toml --extra postgres --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
		--generate-hashes --custom-compile-command "make lock" -o requirements.lock

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/report_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info
