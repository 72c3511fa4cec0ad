# The entry points a newcomer needs (see README): `make site` and `make test`.
# PY picks the interpreter (3.11 or newer); VENV the environment it builds, e.g.
#   make test PY=python3.13 VENV=.venv313
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SETUP := bash scripts/setup-venv
FAST := not browser and not web and not desktop and not postgres and not slow
# CI's two legs (.ci/run), side by side on two cores, every test exactly once: the oldest
# Python runs the screen and slow groups (web, desktop, slow: the engine end to end, through
# Chromium and the X servers, on the oldest interpreter; PyGObject, built from source by
# `make setup`, is there only), beside the linters; the newest runs the fast group (the
# engine's own tests), the built site in Chromium (browser), the ticketing pack's PostgreSQL
# server (postgres) and the site-size benchmark, which needs no screen (site without web or
# desktop: the two legs then take about as long), without the linters (ruff and mypy read
# the source for Python 3.11 whatever runs them).
# The ticketing pack's web app (postgres and web, Chromium's time more than the server's) runs
# on the oldest leg too: the newest holds the rest of the postgres group and had become the
# longer of the two.
# Every desktop test (the ticketing pack's desktop app is postgres and desktop) needs PyGObject,
# which only the oldest leg builds: it runs there whatever other group it carries.
SITE_ONLY := site and not web and not desktop
POSTGRES_WEB := postgres and web and not browser
CI_OLDEST := (not browser and not postgres and not ($(SITE_ONLY)) and not ($(FAST))) or ($(POSTGRES_WEB)) or desktop
CI_NEWEST := (browser or postgres or ($(SITE_ONLY)) or ($(FAST))) and not ($(POSTGRES_WEB)) and not desktop

.PHONY: setup setup-test setup-runtime setup-site setup-screens reference site audit reproduce test test-fast test-ci-oldest test-ci-newest lint generate bench clean

setup:  # everything `make test` needs: tests, linters, the desktop extra and Debian packages
	@$(SETUP) dev "$(PY)" "$(VENV)"

setup-test:  # the runtime plus the test and lint tools, from wheels (no compiler, no apt)
	@$(SETUP) test "$(PY)" "$(VENV)"

setup-runtime:  # only what building and running EffectBench needs
	@$(SETUP) runtime "$(PY)" "$(VENV)"

setup-site:  # what building the site from reproduction records needs: the runtime and the exports' extras
	@$(SETUP) site "$(PY)" "$(VENV)"

setup-screens:  # the runtime with the screen substrates (web, desktop extras; Chromium, X servers)
	@$(SETUP) screens "$(PY)" "$(VENV)"

reference: setup-runtime
	$(BIN)/effectbench reference

site: setup-site  # from the reproduction records: no browser, X server or compiler
	$(BIN)/effectbench site build

# Verify every bundle in full and hold each against the verification ledger (ledger/, when
# there is one): a summary refused, or a report the full verification does not give again,
# fails it (docs/site-scale.md, "The verification ledger"); the scheduled audit workflow runs it.
audit: setup-site
	$(BIN)/effectbench ledger audit submissions $(AUDIT_FLAGS)

# Re-run every shipped-baseline bundle without a valid reproduction record (Chromium, Xvfb,
# Xvnc) and record it: a listed reference's as the maintainers' record in reproductions/, its
# digest written into verifier/reference_bundles.json (commit both); any other bundle's sealed
# for this machine, or signed with REPRODUCE_FLAGS=--sign (the board CI's identity;
# --identity-token TOKEN elsewhere) into reproductions/.
reproduce: setup-screens
	$(BIN)/effectbench reproduce submissions $(REPRODUCE_FLAGS)

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python scripts/complexity.py

test: setup  # every test, browser, web, desktop and slow groups included, beside the linters
	@bash scripts/check "$(BIN)"

test-fast: setup-test  # without the browser, web, desktop and slow groups, beside the linters
	@bash scripts/check "$(BIN)" -m "$(FAST)"

test-ci-oldest: setup  # CI's first leg (.ci/run): see CI_OLDEST
	@bash scripts/check "$(BIN)" -m "$(CI_OLDEST)"

test-ci-newest: setup-test  # CI's second leg (.ci/run): see CI_NEWEST
	@bash scripts/check --no-lint "$(BIN)" -m "$(CI_NEWEST)"

generate: setup-test  # rewrite every generated file (docs tables, schema, pack tables, lists)
	$(BIN)/python scripts/generate.py

bench: setup
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) public build *.egg-info
