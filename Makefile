# Set-up and checks. `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kanonym needs Python >= 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.dev: $(VENV)/.core
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

# The demo writes the HTML report too, which draws with matplotlib.
$(VENV)/.report: $(VENV)/.core
	$(BIN)/python -m pip install --quiet -e '.[report]'
	@touch $@

demo: $(VENV)/.report
	$(BIN)/kanonym demo --output-dir demo-output

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.dev
	$(BIN)/mypy

unit: $(VENV)/.dev
	$(BIN)/python -m pytest

test: lint typecheck unit

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) demo-output build dist src/*.egg-info
