# Everything a fresh machine needs: `make sim` runs a simulated table, `make test` the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TC := $(VENV)/bin/table-controller

.PHONY: sim test lint test-assets bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,web,browser,postgres]'
	touch $@

# The simulated camera renders real card artwork: install it first (needs root on Debian).
sim: $(VENV)/.installed
	bash scripts/install-card-art.sh
	$(TC) sim --game baccarat --rounds 12 --speed 4 --seed 2026 --camera --display

# Test-only system packages (Debian chromium for the browser test, PostgreSQL for the archive
# tests, card artwork for the camera tests); each script does nothing when its package is there.
test-assets:
	@for s in scripts/install-*.sh; do [ -f "$$s" ] && bash "$$s" || exit 1; done

test: $(VENV)/.installed test-assets
	TC_REQUIRE_POSTGRES=1 $(PY) -m pytest -q -n 2 --dist loadfile --durations=25

# Types and lint, as CI runs them before the tests (rule sets in pyproject.toml).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(VENV)/.installed
	for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b; done

clean:
	rm -rf $(VENV) build *.egg-info
