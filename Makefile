# One set of commands for laptops and CI (.ci/run calls these targets).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The port `make run` listens on (127.0.0.1) and `make demo` seeds: make run PORT=8001
PORT   ?= 8000

.PHONY: wrk install run demo screenshots test lint format migrate bench bench-quality ts-client clean

install: $(STAMP)

# Idempotent: rebuilt only when the lock or pyproject changes.
$(STAMP): requirements.lock pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e clients/python
	touch $(STAMP)

run: install
	$(BIN)/foldwise serve --host 127.0.0.1 --port $(PORT)

# With `make run` going in another terminal: a folded demo session for the Inspector
# (http://127.0.0.1:$(PORT)/inspect). FOLDWISE_DEMO_KEY=<key> when API keys are configured.
demo: install
	$(BIN)/foldwise demo --url http://127.0.0.1:$(PORT)

# Regenerates docs/inspector-*.png through the browser tests (needs /usr/bin/chromium).
screenshots: install
	FOLDWISE_SCREENSHOTS=1 $(BIN)/pytest -q tests/inspector -k "sqlite and screenshots"

test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrate: install
	$(BIN)/foldwise migrate

$(VENV)/.bench-installed: requirements-bench.lock $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements-bench.lock
	touch $@

# wrk (Debian package) is the load generator; installed here when missing and running as root.
wrk:
	@command -v wrk >/dev/null || [ "$$(id -u)" != 0 ] || apt-get install -y wrk \
		|| (apt-get update && apt-get install -y wrk)
	@command -v wrk >/dev/null || { echo "make bench needs wrk: sudo apt-get install -y wrk" >&2; exit 1; }

# Every figure of docs/benchmarks.md but the summary retention (~5 min on 2 cores);
# BENCH_ARGS="--skip-postgres" leaves out the PostgreSQL cases.
bench: $(VENV)/.bench-installed wrk
	$(BIN)/python -m bench.run $(BENCH_ARGS)

# Facts kept by summaries of the real transcripts in ../shared/real-transcripts.
bench-quality: $(VENV)/.bench-installed
	$(BIN)/python -m evals.quality

# The TypeScript client after an API change: types from this app's schema, dist/ rebuilt.
ts-client: install
	cd clients/typescript && npm ci --prefer-offline --no-audit --no-fund && npm run generate-types && npm run build

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
