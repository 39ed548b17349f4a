# factstream: `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: help setup tools services provision demo test test-unit reliability bench bench-1m lint format down clean

help:
	@echo "make demo       set everything up, start the local stack, run the demo"
	@echo "make test       set everything up, run lint and every test (unit + integration)"
	@echo "make test-unit  unit tests only (no services)"
	@echo "make reliability the reliability suite at full size (faults, bad input)"
	@echo "make bench      the benchmarks (bench/results/<timestamp>.json, a table; ~30 min)"
	@echo "make bench-1m   ask latency at 1M facts on a Weaviate of its own (~30 min, several GB)"
	@echo "make lint       ruff + mypy"
	@echo "make down       stop the local services"

tools:
	@deploy/local/require-tools.sh

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml deploy/local/require-tools.sh
	@deploy/local/require-tools.sh
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "factstream needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m factstream.services.compose_cli
	@touch $@

# First run: resolves Kafka from Maven Central, builds Weaviate (go install),
# llama-cpp-python and promtool (go build, for the monitoring tests); about 15-25 minutes.
# Cached in $${FACTSTREAM_CACHE_DIR:-~/.cache/factstream}.
provision: setup
	$(BIN)/factstream services provision
	$(BIN)/python -m factstream.services.promtool

services: setup
	$(BIN)/factstream services up

demo: setup
	$(BIN)/factstream demo

lint: setup
	$(BIN)/ruff check factstream tests bench
	$(BIN)/ruff format --check factstream tests bench
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix factstream tests bench
	$(BIN)/ruff format factstream tests bench

# Integration tests start the services they need (reusing running ones) and stop what they started.
test: lint provision
	$(BIN)/pytest

# The reliability suite at full size (make test runs it reduced); figures to docs/reliability/.
reliability: lint provision
	FACTSTREAM_RELIABILITY=full FACTSTREAM_RELIABILITY_RESULTS=docs/reliability \
		$(BIN)/pytest tests/reliability

# Benchmarks on the real local stack (started if needed); see bench/README.md.
bench: provision
	$(BIN)/python -m bench

bench-1m: provision
	$(BIN)/python -m bench --only ask_1m

test-unit: setup
	$(BIN)/pytest -m "not integration"

down: setup
	$(BIN)/factstream services down

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
