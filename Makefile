# Everything a fresh machine needs: `make sim` runs a simulated table, `make test` the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TC := $(VENV)/bin/table-controller

.PHONY: sim test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,web]'
	touch $@

sim: $(VENV)/.installed
	$(TC) rules demo --rounds 3

test: $(VENV)/.installed
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	for b in benchmarks/*.py; do $(PY) $$b; done

clean:
	rm -rf $(VENV) build *.egg-info
