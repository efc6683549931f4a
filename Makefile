# The project's commands. `make run` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
EXTRAS := test,dev,streamparse,spark
PROTOS := $(wildcard heron_core/proto/*.proto)
RUN_SECONDS ?= 30

.PHONY: install run test lint proto bench bench-full clean

# Creates .venv and installs the package (editable) with what tests and lint need.
# Re-runs pip only when pyproject.toml changed, so a second `make install` is instant.
install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[$(EXTRAS)]'
	@touch $(STAMP)

# Runs the word count topology on this machine with live progress and a final summary.
run: install
	$(BIN)/heron run topologies/word_count.py --time $(RUN_SECONDS)

# The whole suite: kernel tests, the Storm conformance suite and doctests.
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Regenerates heron_core/proto/*_pb2.py(i) from the .proto files (tests check they are fresh).
proto: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -I . \
		--python_out=. --mypy_out=quiet:. $(PROTOS)

# The benchmark suite against the peers (bench/README.md): the quick set (under 5 minutes) and
# everything. The first run also installs the `bench` extra (Bytewax; PySpark comes with the
# `spark` extra that `make test` installs for the spark scheduler's tests). BENCH_ARGS adds
# flags, e.g. `make bench BENCH_ARGS=--no-record`.
BENCH_STAMP := $(VENV)/.bench-installed-stamp

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[$(EXTRAS),bench]'
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/run.py --quick $(BENCH_ARGS)

bench-full: $(BENCH_STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
