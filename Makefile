# factstream: `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# When make began (read once, as make reads this file): the demo's results file times the
# whole first run from here, the venv's setup included.
MAKE_STARTED := $(shell date +%s)
# make demo DEMO_RESULTS=path.json: where the demo writes its figures (default: the cache).
DEMO_RESULTS ?=

.PHONY: help setup tools services provision demo test test-unit test-integration reliability \
	screenshots window-clark bench bench-1m bench-busy bench-scale bench-breakdown bench-namespaces \
	eval-locomo-turns lint format down clean
# make test's steps run one after another, in the order named, even under make -j: lint and the
# unit tests fail fast, before provisioning and the integration tests.
.NOTPARALLEL:

help:
	@echo "make help              this list"
	@echo "make demo              set everything up, start the local stack, run the demo"
	@echo "make test              lint, then test-unit, then test-integration; stops at a failure"
	@echo "make test-unit         unit tests only (no services)"
	@echo "make test-integration  integration tests (real services, reliability suite reduced)"
	@echo "make reliability       the reliability suite at full size (faults, bad input)"
	@echo "make screenshots       the web console's browser test, its screenshots to docs/console/"
	@echo "make window-clark      300 CLARK-News documents: W=8 equal to W=1 (results/window/)"
	@echo "make bench             the benchmarks (results/bench/<timestamp>.json, a table; ~20 min)"
	@echo "make bench-1m          ask latency at 1M facts on a Weaviate of its own (~30 min, GBs)"
	@echo "make bench-busy        one busy namespace: docs/s at windows 1, 4, 16, 32 (issue 18)"
	@echo "make bench-scale       docs/s with 1, 2 and 3 workers in one group (issue 25)"
	@echo "make bench-namespaces  10,000 fresh namespaces vs a few warm ones: cost per namespace (issue 40)"
	@echo "make bench-breakdown   what a document and a question cost, counted (issue 37)"
	@echo "make eval-locomo-turns LoCoMo on the turns KB, no LM (results/eval/locomo-*.json)"
	@echo "make lint              ruff + mypy"
	@echo "make format            ruff's fixes and formatting, in place"
	@echo "make setup             the venv (.venv) with factstream and its dev tools"
	@echo "make tools             check (or apt-get install) the system tools the builds need"
	@echo "make provision         build and cache Kafka, Weaviate, the LM server, promtool"
	@echo "make services          start the local services (Kafka, Weaviate, LM server)"
	@echo "make down              stop the local services"
	@echo "make clean             remove the venv and the pytest, mypy and ruff caches"

tools:
	@deploy/local/require-tools.sh

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml deploy/local/require-tools.sh
	@deploy/local/require-tools.sh
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "factstream needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,lab]'
	$(BIN)/python -m factstream_lab.stack.compose_cli
	@touch $@

# First run: resolves Kafka from Maven Central, builds Weaviate (go install),
# llama-cpp-python and promtool (go build, for the monitoring tests), exports the embedding
# model to ONNX (seconds); about 15-25 minutes. Cached in $${FACTSTREAM_CACHE_DIR:-~/.cache/factstream}.
provision: setup
	$(BIN)/factstream services provision
	$(BIN)/python -m factstream_lab.stack.promtool
	$(BIN)/python -m factstream.embed.onnx_export

services: setup
	$(BIN)/factstream services up

demo: setup
	FACTSTREAM_DEMO_STARTED=$(MAKE_STARTED) $(BIN)/factstream demo $(if $(DEMO_RESULTS),--results $(DEMO_RESULTS))

lint: setup
	$(BIN)/ruff check factstream factstream_lab tests bench examples
	$(BIN)/ruff format --check factstream factstream_lab tests bench examples
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix factstream factstream_lab tests bench examples
	$(BIN)/ruff format factstream factstream_lab tests bench examples

# lint, the unit tests, the integration tests: in this order (.NOTPARALLEL), stopping at the
# first that fails. Together the two pytest runs are the whole suite.
test: lint test-unit test-integration

test-unit: setup
	$(BIN)/pytest -m "not integration"

# Integration tests start the services they need (reusing running ones) and stop what they started.
test-integration: provision
	$(BIN)/pytest -m integration

# The reliability suite at full size (make test runs it reduced); figures to results/reliability/.
# Its temporary folders (every worker's log) stay in build/reliability until its next run,
# out of reach of pytest's rotation of /tmp/pytest-of-$USER by other pytest runs.
reliability: lint provision
	mkdir -p build  # pytest makes --basetemp, not its parent
	FACTSTREAM_RELIABILITY=full FACTSTREAM_RELIABILITY_RESULTS=results/reliability \
		$(BIN)/pytest tests/reliability --basetemp=build/reliability

# The web console's browser test (Debian's chromium), keeping its screenshots for the docs.
screenshots: provision
	FACTSTREAM_SCREENSHOTS=docs/console $(BIN)/pytest tests/integration/test_console_browser.py

# The window's equivalence on the first 300 CLARK-News documents in one namespace, against
# the LM double whose judgement depends on the whole prompt (issue 39): W=8 equals W=1.
window-clark: provision
	FACTSTREAM_WINDOW_CLARK=1 FACTSTREAM_STORE_BM25_B=0 FACTSTREAM_WINDOW_RESULTS=results/window \
		$(BIN)/pytest \
		tests/integration/test_window_equivalence.py -k clark -s

# Benchmarks on the real local stack (started if needed); see bench/README.md.
bench: provision
	$(BIN)/python -m bench

bench-1m: provision
	$(BIN)/python -m bench --only ask_1m

# 300 CLARK-News documents in one namespace, stub LM at 500 ms a call (issue 18).
bench-busy: provision
	$(BIN)/python -m bench --only busy --docs 300 --window 1 --window 4 --window 16 \
		--window 32 --lm-latency 500

# 240 CLARK-News documents, 96 namespaces, 12 partitions, window 4; 1, 2, 3 workers (issue 25).
bench-scale: provision
	$(BIN)/python -m bench.scale --docs 240 --lm-latency 500 --placement planned

# N = 10,000 conversations of 2 chunks into fresh namespaces beside a 600-document sample into
# 4 warm ones, stub LM at 0 ms (the LM is not the cost); plus tenant creation, RSS, series,
# first ask inactive (issue 40). About 75 minutes of fresh documents on a loaded 2-core machine.
bench-namespaces: provision
	$(BIN)/python -m bench.namespaces --n 10000 --chunks 2 --warm-docs 600 --lm-latency 0
# Per document and per question: Weaviate requests, Kafka round trips, texts embedded,
# CPU by step and stage (py-spy); results/bench/<timestamp>-breakdown.json (issue 37).
bench-breakdown: provision
	$(BIN)/python -m bench.breakdown --facts 100000 --queries 200

# LoCoMo's development conversations (LOCOMO: their folder), turns as passages, no worker, no
# LM: evidence recall@5/@10 per category and time resolved (issue 38; docs/evaluation.md).
LOCOMO ?= ../shared/data/locomo
eval-locomo-turns: services
	$(BIN)/factstream eval locomo --data $(LOCOMO) --kb turns --out results/eval

down: setup
	$(BIN)/factstream services down

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
