# Set-up and checks. `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck imports docs unit bench clean

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

# The demo writes the HTML report too, whose figures vl-convert renders.
$(VENV)/.report: $(VENV)/.core
	$(BIN)/python -m pip install --quiet -e '.[report]'
	@touch $@

demo: $(VENV)/.report
	$(BIN)/kanonym demo --output-dir demo-output

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks docs/hooks
	$(BIN)/ruff format --check src tests benchmarks docs/hooks

typecheck: $(VENV)/.dev
	$(BIN)/mypy

# The layering rules (pyproject.toml, [tool.importlinter]): no cycles, verify apart, engines
# below the search.
imports: $(VENV)/.dev
	$(BIN)/lint-imports

unit: $(VENV)/.dev
	$(BIN)/python -m pytest

# The documentation site (mkdocs.yml) into site/, in strict mode: a broken link,
# anchor, included file or API reference fails the build. Offline: nothing is fetched.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

test: lint typecheck imports docs unit

bench: $(VENV)/.dev
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) demo-output site build dist src/*.egg-info
