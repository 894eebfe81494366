# The two entry points of the README. Each does its own set-up: SWI-Prolog >= 9.1.12
# (scripts/install-swipl: reuses a suitable one, else installs or builds it), a virtual
# environment, and the package with janus-swi built against that SWI-Prolog.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
VENV := .venv
GAME ?= gdl2pl/examples/ticTacToe.kif
SEED ?= 7

.PHONY: play test test-fast lint clean FORCE

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

# An editable install in setuptools' strict mode: a tree of links to the sources that mypy
# and editors read as the installed package. It is made again when a file is added or
# removed (the list below changes) or the C evaluator changes.
$(VENV)/.installed: $(VENV)/bin/python pyproject.toml $(VENV)/.sources $(wildcard gdl2pl/compiled/*.c gdl2pl/compiled/*.h)
	@swipl_bin="$$(scripts/install-swipl | tail -n 1)"; \
	export PATH="$$swipl_bin:$$PATH"; \
	$(VENV)/bin/python -m pip install --quiet --no-binary janus-swi \
		--config-settings editable_mode=strict -e .
	touch $@

$(VENV)/.sources: FORCE | $(VENV)/bin/python
	@git ls-files --cached --others --exclude-standard gdl2pl bridge prolog | sort > $@.new; \
	cmp -s $@.new $@ && rm $@.new || mv $@.new $@

FORCE:

lint: $(VENV)/.tools
	$(VENV)/bin/tox run -e lint

clean:
	rm -rf $(VENV) .tox build *.egg-info
