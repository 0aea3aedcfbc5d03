# Both targets bootstrap themselves: they create .venv and install the project on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INTEROP := $(VENV)/.interop

.PHONY: test check lint lint-python demo tui schemas bench soak fuzz mutants lock clean

# The developer's environment comes from the hash-pinned lock (the `dev` dependency group and
# the `postgres` extra, see pyproject.toml); the project itself is installed without resolving.
$(STAMP): pyproject.toml requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements/dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e '.[postgres]'
	touch $(STAMP)

# Re-resolve requirements/dev.lock after a change to pyproject.toml's dependencies; versions
# already in the lock are kept unless UPGRADE=1.
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet 'uv>=0.5'
	$(BIN)/uv pip compile pyproject.toml --group dev --extra postgres --universal \
		--python-version 3.11 --generate-hashes --no-header --quiet \
		$(if $(UPGRADE),--upgrade) -o requirements/dev.lock

# Test-only: aics-tlog, an independent C2SP signed-note implementation the guard's checkpoints
# are checked against (tests/verifier/test_c2sp_interop.py); pinned by hash, see the file.
$(INTEROP): $(STAMP) tests/verifier/interop-requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --ignore-requires-python --require-hashes \
		-r tests/verifier/interop-requirements.txt
	touch $@

# pytest-xdist workers: by default twice the cores, as most tests wait on the processes,
# servers and browsers they start rather than on the CPU. Work stealing: a worker that runs
# out takes tests queued for another (with plain load balancing, three idled for minutes
# while the fourth worked through its browser tests). docs/testing.md has the timings.
JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))

# Bytecode is written even where the environment says not to: without it every xdist worker
# compiles and assertion-rewrites all test modules again (collection 7 s -> 20 s each), and
# every `python -m guard` the tests start compiles the guard from source.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

# ruff and mypy; `lint` adds the TypeScript check against each pinned pi (npm on first use).
lint-python: $(STAMP)
	$(BIN)/ruff check audit guard planning tools tests bench examples
	$(BIN)/ruff format --check audit guard planning tools tests bench examples
	$(BIN)/mypy

lint: lint-python
	$(BIN)/python -m tools.pi.typecheck

test: lint $(INTEROP)
	$(PYTEST) -n $(JOBS) --dist worksteal

# The fast inner loop: ruff, mypy and the unit, property and in-process tests: no npm
# install, no real pi, browser, PostgreSQL or sandbox, no minutes (markers e2e, npm, slow,
# integration). Its tests are CPU-bound, so one worker per core (collection costs each
# worker seconds of CPU).
CHECK_JOBS ?= $(shell nproc)
check: lint-python $(INTEROP)
	$(PYTEST) -n $(CHECK_JOBS) --dist worksteal -m "not e2e and not slow and not npm and not integration"

demo: $(STAMP)
	$(BIN)/python -m tools.pi.demo

# pi's own terminal UI with the guard, offline, against the demo's scripted model: you answer.
tui: $(STAMP)
	$(BIN)/python -m tools.pi.tui

# docs/schemas/ is generated from the pydantic models; a test fails when it drifts.
schemas: $(STAMP)
	$(BIN)/python -m tools.schemas docs/schemas

bench: $(STAMP)
	$(BIN)/python bench/run.py

soak: $(STAMP)
	PI_OPERATOR_GUARD_SOAK_CONFIRMATIONS=10000 $(BIN)/python -m pytest tests/soak -q -s

# Property and fuzz tests with fresh randomness and FUZZ_SCALE times each test's examples
# (tests/conftest.py, the "fuzz" hypothesis profile); docs/testing.md records what it found.
FUZZ_SCALE ?= 20
FUZZ_TESTS = $(shell grep -rl --include='*.py' '@given' tests)
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/python -m pytest -p no:cacheprovider \
		-q -m "not e2e" --durations=10 $(FUZZ_TESTS)

# Mutation testing of the security-critical modules (mutmut, the "mutants" dependency group)
# under a wall-clock budget; docs/testing.md has the results. Not part of `make test`.
MUTANTS_BUDGET ?= 3600
$(VENV)/.mutants: $(STAMP)
	$(BIN)/python -m pip install --quiet --group mutants
	touch $@

mutants: $(VENV)/.mutants
	MUTANTS_BUDGET=$(MUTANTS_BUDGET) MUTANTS_FRESH=$(MUTANTS_FRESH) $(BIN)/python -m tools.mutants $(MODULES)

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache mutants
