# The two entry points a newcomer needs (see README): `make site` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup reference site test lint bench clean

$(STAMP): pyproject.toml VERSION .ci/apt-packages
	bash .ci/install-system-packages
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

reference: setup
	$(BIN)/effectbench reference

site: setup
	$(BIN)/effectbench site build

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest -q

bench: setup
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) public build *.egg-info
