"""Hypothesis against every file and text a user hands ``heron submit``: Flux YAML (with
properties files), a streamparse project's ``config.json``, Storm thrift topologies, cluster
config files and ``--config-property`` values. Whatever the bytes, the answer is a
``HeronError`` naming the file (and, for a bad entry, the entry), never a raw traceback; an
error never prints the contents of a file that ``includes`` names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from heron_core.config import load_cluster_config, parse_override
from heron_core.errors import HeronError
from storm_compat.flux import load_definition, parse_properties
from storm_compat.streamparse._project import SparseProject
from storm_compat.thrift import read_topology, topology_to_plan

FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
YAML_FUZZ = settings(FUZZ, max_examples=60)
"""PyYAML is slow: fewer examples for the YAML files."""
DEEP = b"[" * 700
"""Nested deeper than PyYAML can recurse."""
DEEP_JSON = b"[" * 1500
"""Nested deeper than the json module can recurse."""
SECRET = "s3cr3t-value-that-must-not-leak"

_FLUX_WORDS = [
    "name", "config", "spouts", "bolts", "streams", "components", "includes", "id",
    "className", "from", "to", "grouping", "type", "args", "constructorArgs", "properties",
    "configMethods", "ref", "reflist", "file", "resource", "override", "parallelism",
    "topologySource", "customClass", "value", "factory", "methodName", "numTasks",
]  # fmt: skip
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
STRUCTURES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(_FLUX_WORDS), st.text(max_size=4)), inner,
                        max_size=5),
    ),
    max_leaves=25,
)  # fmt: skip
"""JSON-shaped values whose keys are often the format's own (so checks deep inside run)."""

FILE_BYTES = st.one_of(
    st.binary(max_size=200),
    STRUCTURES.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([DEEP, b"a: " + DEEP, b"\xff\xfe\x00", b"a: &x [1]\nb: *x\n", b"{[1]: 2}"]),
)


def _only_heron_errors(call: object) -> str:
    try:
        call()  # type: ignore[operator]
    except HeronError as exc:
        return str(exc)
    return ""


@YAML_FUZZ
@given(FILE_BYTES)
@example(b"\x80abc")  # regression: a raw UnicodeDecodeError
@example(DEEP)  # regression: a raw RecursionError
@example(b"includes: [{file: /etc/hostname}]")  # regression: any file's contents were printed
def test_a_flux_file_fails_with_a_heron_error_naming_it(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "topology.yaml"
    path.write_bytes(data)
    message = _only_heron_errors(lambda: load_definition(path, {}))
    assert not message or str(path) in message


@pytest.mark.parametrize("name", ["secret.txt", "secret.yaml"])
def test_an_included_file_is_never_shown_in_the_error(tmp_path: Path, name: str) -> None:
    """Regression: the error quoted the included file (any file the user could read)."""
    (tmp_path / name).write_text(f"{SECRET}\n  - : [{SECRET}\n")
    path = tmp_path / "topology.yaml"
    path.write_text(f"includes:\n  - file: {name}\n")
    with pytest.raises(HeronError) as caught:
        load_definition(path, {})
    assert SECRET not in str(caught.value)
    assert "includes[0]" in str(caught.value) or "line 2" in str(caught.value)


@FUZZ
@given(st.text(max_size=200))
@example("key=\\uZZZZ")  # regression: a raw ValueError from a bad \u escape
@example("key=\\u12")
def test_a_properties_file_always_parses(text: str) -> None:
    assert isinstance(parse_properties(text), dict)


@FUZZ
@given(FILE_BYTES)
@example(DEEP_JSON)  # regression: a raw RecursionError
def test_a_streamparse_config_fails_with_a_heron_error_naming_it(
    tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(data)

    def load() -> None:
        project = SparseProject.load(path)
        project.environment()
        project.serializer({})
        assert project.code_root is None or project.code_root.is_dir()

    message = _only_heron_errors(load)
    assert not message or str(path) in message


@FUZZ
@given(st.binary(max_size=300))
@example(bytes([13, 0, 1]))  # regression: a raw struct.error
@example(bytes([15, 0, 1, 12, 0x80, 0, 0, 0]))  # regression: a raw SystemError
@example(bytes([15, 0, 1, 2, 0x7F, 0xFF, 0xFF, 0xFF]))  # regression: 2**31 bools skipped, a hang
def test_thrift_bytes_give_a_plan_or_a_heron_error(data: bytes) -> None:
    _only_heron_errors(lambda: topology_to_plan(read_topology(data), "fuzzed"))


@YAML_FUZZ
@given(FILE_BYTES)
@example(b"\x80")  # regression: a raw UnicodeDecodeError
@example(b"topology.stmgrs: " + DEEP)  # regression: a raw RecursionError
def test_a_cluster_config_fails_with_a_heron_error_naming_it(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "fuzz.yaml").write_bytes(data)
    message = _only_heron_errors(lambda: load_cluster_config("fuzz", tmp_path))
    assert not message or "fuzz.yaml" in message


KEYS = st.sampled_from(
    [
        "topology.debug",
        "topology.stmgrs",
        "topology.max.spout.pending",
        "topology.tick.tuple.freq.secs",
        "topology.reliability.mode",
        "heron.metrics.sinks",
        "heron.network.max.frame.bytes",
        "my.own.key",
    ]
)


@FUZZ
@given(KEYS, st.one_of(st.text(max_size=40), st.sampled_from([DEEP_JSON.decode(), "1" * 5000])))
@example("heron.metrics.sinks", DEEP_JSON.decode())  # regression: a raw RecursionError
@example("my.own.key", DEEP_JSON.decode())
@example("topology.tick.tuple.freq.secs", "[" * 5000)  # regression: the error quoted it all
def test_a_config_property_is_read_or_refused_naming_the_key(key: str, value: str) -> None:
    message = _only_heron_errors(lambda: parse_override(f"{key}={value}"))
    assert not message or key in message
    assert len(message) < 1000
