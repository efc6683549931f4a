# The project's commands. `make run` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
EXTRAS := test,dev,streamparse,spark
PROTOS := $(wildcard heron_core/proto/*.proto)
RUN_SECONDS ?= 30

.PHONY: install run test test-pure lint proto bench bench-full clean

# The per-tuple modules that pip compiles with mypyc, and the hand-written C ones with the
# .py files beside them (heron_core/_compiled.py lists them).
C_SOURCES := $(shell find heron_core storm_compat -name '*.c')
HOT := $(shell sed -n 's/^    "\(\(heron_core\|storm_compat\)[^"]*\)",$$/\1/p' heron_core/_compiled.py | tr . / | sed 's/$$/.py/') \
       $(C_SOURCES) $(C_SOURCES:.c=.py)
COMPILED_STAMP := $(VENV)/.compiled-stamp

# Creates .venv and installs the package (editable) with what tests and lint need, compiling
# the hot path (HERON_PURE_PYTHON=1 make install: no compiling). Re-runs pip only when
# pyproject.toml or setup.py changed, and compiles again only when a hot module changed, so a
# second `make install` is instant.
install: $(STAMP) $(COMPILED_STAMP)

$(STAMP): pyproject.toml setup.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[$(EXTRAS)]'
	@touch $(STAMP) $(COMPILED_STAMP)

# Compiling again starts from no extension at all: one left from a module no longer in the
# list would fail the import of the new group.
DROP_COMPILED := find heron_core storm_compat -name '*.so' -delete; rm -f heron_core__mypyc*.so

$(COMPILED_STAMP): $(HOT) heron_core/_compiled.py | $(STAMP)
	$(DROP_COMPILED)
	$(BIN)/python setup.py -q build_ext --inplace --force
	@touch $(COMPILED_STAMP)

# Runs the word count topology on this machine with live progress and a final summary.
run: install
	$(BIN)/heron run topologies/word_count.py --time $(RUN_SECONDS)

# The whole suite: kernel tests, the Storm conformance suite and doctests, TEST_JOBS files at
# a time (pytest-xdist; much of the suite waits on the processes it starts; TEST_JOBS=0 runs
# it in one process).
TEST_JOBS ?= 3
PYTEST_JOBS := -n $(TEST_JOBS) --dist loadfile

test: install
	$(BIN)/python -m pytest $(PYTEST_JOBS) $(PYTEST_ARGS)

# The same suite on the plain Python fallback of the compiled hot path (HERON_PURE_PYTHON=1,
# which every process a test starts inherits). CI runs it after `make test`.
test-pure: install
	HERON_PURE_PYTHON=1 $(BIN)/python -m pytest $(PYTEST_JOBS) $(PYTEST_ARGS)

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
	$(DROP_COMPILED)
