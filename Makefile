# The two entry points of the README. Each does its own set-up: SWI-Prolog >= 9.1.12
# (scripts/install-swipl: reuses a suitable one, else installs or builds it), a virtual
# environment, and the package with janus-swi built against that SWI-Prolog.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
VENV := .venv
GAME ?= gdl2pl/examples/ticTacToe.kif
SEED ?= 7

.PHONY: play test test-fast lint clean

# The main job: a real match played through the reasoner, then a speed check.
play: $(VENV)/.installed
	@swipl_bin="$$(scripts/install-swipl | tail -n 1)"; \
	export PATH="$$swipl_bin:$$PATH"; \
	$(VENV)/bin/gdl2pl check $(GAME); \
	$(VENV)/bin/gdl2pl play $(GAME) --seed $(SEED); \
	$(VENV)/bin/gdl2pl simulate $(GAME) -n 2000 --seed $(SEED)

# The whole test suite (tox: the tests, ruff, mypy), with every optional library.
test: $(VENV)/.tools
	@swipl_bin="$$(scripts/install-swipl | tail -n 1)"; \
	export PATH="$$swipl_bin:$$PATH"; \
	scripts/install-extras; \
	$(VENV)/bin/tox run -e py,lint,type

# The quick part of the suite while working (no corpora, networks or other libraries).
test-fast: $(VENV)/.tools
	@swipl_bin="$$(scripts/install-swipl | tail -n 1)"; \
	export PATH="$$swipl_bin:$$PATH"; \
	$(VENV)/bin/tox run -e py -- -m "not slow and not external_corpus"

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip

$(VENV)/.tools: $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet "tox>=4"
	touch $@

$(VENV)/.installed: $(VENV)/bin/python pyproject.toml
	@swipl_bin="$$(scripts/install-swipl | tail -n 1)"; \
	export PATH="$$swipl_bin:$$PATH"; \
	$(VENV)/bin/python -m pip install --quiet --no-binary janus-swi -e .
	touch $@

lint: $(VENV)/.tools
	$(VENV)/bin/tox run -e lint

clean:
	rm -rf $(VENV) .tox build *.egg-info
