# The entry points a newcomer needs (see README): `make site` and `make test`.
# PY picks the interpreter (3.11 or newer); VENV the environment it builds, e.g.
#   make test PY=python3.13 VENV=.venv313
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SETUP := bash scripts/setup-venv

.PHONY: setup setup-runtime reference site test test-fast lint bench clean

setup:  # runtime and development dependencies (tests, linters)
	@$(SETUP) dev "$(PY)" "$(VENV)"

setup-runtime:  # only what building and running EffectBench needs
	@$(SETUP) runtime "$(PY)" "$(VENV)"

reference: setup-runtime
	$(BIN)/effectbench reference

site: setup-runtime
	$(BIN)/effectbench site build

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint  # everything, the browser tests included (they need Debian's chromium)
	$(BIN)/pytest -q

test-fast: lint  # without the browser and slow groups
	$(BIN)/pytest -q -m "not browser and not slow"

bench: setup
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) public build *.egg-info
