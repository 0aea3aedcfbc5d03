# Both targets bootstrap themselves: they create .venv and install the project on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint demo schemas bench soak clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check audit guard planning tools tests bench examples
	$(BIN)/ruff format --check audit guard planning tools tests bench examples
	$(BIN)/mypy
	$(BIN)/python -m tools.pi.typecheck

test: lint
	$(BIN)/python -m pytest

demo: $(STAMP)
	$(BIN)/python -m tools.pi.demo

# docs/schemas/ is generated from the pydantic models; a test fails when it drifts.
schemas: $(STAMP)
	$(BIN)/python -m tools.schemas docs/schemas

bench: $(STAMP)
	$(BIN)/python bench/run.py

soak: $(STAMP)
	PI_OPERATOR_GUARD_SOAK_CONFIRMATIONS=10000 $(BIN)/python -m pytest tests/soak -q -s

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache
