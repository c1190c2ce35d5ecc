# The two commands the README names: `make demo` and `make test`. Both install what is missing.
SHELL := /bin/bash
PY    := .venv/bin/python
## pytest-xdist workers for `make test` and `make test-unit` (2: pure tests). `make test` runs two
## workers where the machine has two cores and 12 GB of memory (each worker runs its own sandbox,
## browser and console server: about 5 GB), else one; `WORKERS=N` says otherwise. Modules go to the
## workers whole, and those sharing the ZooKeeper sandbox or the in-process Spark driver together
## (tests/scheduling.py).
WORKERS      ?= $(shell scripts/test-workers.sh)
UNIT_WORKERS ?= 2
xdist = $(if $(filter-out 0 1,$(1)),-n $(1) --dist loadscope,)
PIP   := .venv/bin/pip
STAMP := .venv/.installed

.PHONY: demo dev test test-unit setup system-packages jars keycloak clean-sandbox

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(PY) || python3 -m venv .venv
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	@# `console` importable from any directory (notebooks, scripts); quiet unless it fails
	@$(PIP) install -q --no-deps -e . >/dev/null 2>&1 || $(PIP) install --no-deps -e .
	@touch $(STAMP)

system-packages:
	@scripts/system-packages.sh

## The jars of the default release (Kafka 4.x), of 3.9.1 (ZooKeeper mode) and of the earlier 4.x
## lines (4.0, 4.1, 4.2): the suite runs them all. Each release is fetched once, then cached.
jars: $(STAMP)
	@PYTHONPATH=. $(PY) -c "from console.sandbox.cluster import ensure_classpath; from console.sandbox.versions import DEFAULT_KAFKA, ZOOKEEPER_KAFKA, EARLIER_KAFKA4; [ensure_classpath(version=v) for v in (DEFAULT_KAFKA, ZOOKEEPER_KAFKA, *EARLIER_KAFKA4)]" >/dev/null

## Keycloak (Maven Central), the OIDC provider the end-to-end tests sign in through.
keycloak: $(STAMP)
	@PYTHONPATH=. $(PY) -m tests.keycloak >/dev/null

setup: system-packages $(STAMP) jars keycloak

## Start the local sandbox cluster with demo data and open the console (Ctrl-C stops both); the
## demo needs no Keycloak (the test suite's identity provider).
demo: system-packages $(STAMP) jars
	@scripts/demo.sh

## `make demo` with Streamlit's development settings: reruns on save (docs/DEVELOPMENT.md).
dev: system-packages $(STAMP) jars
	@DEV=1 scripts/demo.sh

## Run the whole test suite: unit, integration (real cluster), app, end-to-end (real browser).
test: setup
	PYTHONPATH=. $(PY) -m pytest $(call xdist,$(WORKERS)) $(PYTEST_ARGS)

## The unit tier only (no cluster, no browser; under 3 minutes): the inner loop.
test-unit: $(STAMP)
	PYTHONPATH=. $(PY) -m pytest tests/unit -m unit $(call xdist,$(UNIT_WORKERS)) $(PYTEST_ARGS)

clean-sandbox:
	-PYTHONPATH=. $(PY) -m console sandbox down
