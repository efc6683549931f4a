"""Reading Flux files: substitution, properties files, includes, and bad files (errors name the
file and the entry)."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heron_core.errors import ConfigurationError
from storm_compat.flux import (
    PROPERTIES_ENV,
    FluxDefinition,
    Ref,
    RefList,
    find_properties,
    load_definition,
    parse_properties,
    substitute,
)

BASE = """
name: "base"
config:
  a: 1
  b: 1
spouts:
  - id: "s"
    className: "x.S"
bolts:
  - id: "b"
    className: "x.B"
streams:
  - from: "s"
    to: "b"
    grouping: {type: SHUFFLE}
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def load(path: Path) -> FluxDefinition:
    return load_definition(path, {})


def test_substitution_from_the_environment_and_properties(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("FLUX_HOST", "h1")
    properties = {"topic": "words", "hosts": '["a", "b"]'}
    text = "${ENV-FLUX_HOST}:${topic} ${hosts[1]} ${hosts[0]}${missing} ${ENV-FLUX_NOPE}"
    assert substitute(text, properties, "f.yaml") == "h1:words b a${missing} ${ENV-FLUX_NOPE}"
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "f.yaml: no value for ${missing}; left as it is",
        "f.yaml: no value for ${ENV-FLUX_NOPE}; left as it is",
    ]


def test_the_properties_file_beside_the_yaml_or_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = write(tmp_path, "topology.yaml", "name: x\n")
    monkeypatch.delenv(PROPERTIES_ENV, raising=False)
    assert find_properties(yaml_path) is None
    beside = write(tmp_path, "topology.properties", "a=1\n")
    assert find_properties(yaml_path) == beside
    elsewhere = write(tmp_path, "conf/dev.properties", "a=2\n")
    monkeypatch.setenv(PROPERTIES_ENV, str(elsewhere))
    assert find_properties(yaml_path) == elsewhere
    monkeypatch.setenv(PROPERTIES_ENV, str(tmp_path / "missing.properties"))
    with pytest.raises(ConfigurationError, match=r"HERON_FLUX_PROPERTIES=.*is not a file"):
        find_properties(yaml_path)


def test_java_properties_syntax() -> None:
    text = textwrap.dedent(
        """\
        # a comment
        ! another
        key1=value one
          key2 : spaced\\
              continued
        key3 value3
        empty=
        tab\\tkey=\\u0041\\\\b\\n
        """
    )
    assert parse_properties(text) == {
        "key1": "value one",
        "key2": "spacedcontinued",
        "key3": "value3",
        "empty": "",
        "tab\tkey": "A\\b\n",
    }


def _escape(value: str) -> str:
    out = []
    for char in value:
        if char == "\\":
            out.append("\\\\")
        elif char in "\n\t\r\f" or not char.isprintable() or char in "#!=: ":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=12), max_size=5))
def test_escaped_properties_round_trip(properties: dict[str, str]) -> None:
    properties = {k: v for k, v in properties.items() if all(ord(c) < 0x10000 for c in k + v)}
    text = "\n".join(f"{_escape(k)}={_escape(v)}" for k, v in properties.items())
    assert parse_properties(text) == properties


def test_references_in_arguments(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "t.yaml",
        """
        components:
          - id: "c"
            className: "x.C"
            constructorArgs: [1, {ref: "other"}, {reflist: ["a", "b"]}, {ref: "x", extra: 1}]
        """,
    )
    (component,) = load(path).components
    assert component.constructor_args == (
        1,
        Ref("other"),
        RefList(("a", "b")),
        {"ref": "x", "extra": 1},
    )


def test_includes_merge_with_and_without_override(tmp_path: Path) -> None:
    write(
        tmp_path,
        "inc/keep.yaml",
        """
        name: "ignored"
        config: {b: 2, c: 2}
        bolts:
          - id: "b"
            className: "x.Ignored"
          - id: "b2"
            className: "x.B2"
        streams:
          - from: "b"
            to: "b2"
            grouping: {type: ALL}
        """,
    )
    write(
        tmp_path,
        "inc/win.yaml",
        'name: "winner"\nconfig: {a: 3}\nspouts: [{id: "s", className: "x.S2"}]\n',
    )
    main = write(
        tmp_path,
        "main.yaml",
        BASE
        + """
includes:
  - file: "inc/keep.yaml"
  - file: "inc/win.yaml"
    override: true
""",
    )
    definition = load(main)
    assert definition.name == "winner"
    assert definition.config == {"a": 3, "b": 1, "c": 2}
    assert [(v.id, v.bean.class_name) for v in definition.spouts] == [("s", "x.S2")]
    assert [(v.id, v.bean.class_name) for v in definition.bolts] == [("b", "x.B"), ("b2", "x.B2")]
    assert [(s.source, s.target, s.grouping.type) for s in definition.streams] == [
        ("s", "b", "SHUFFLE"),
        ("b", "b2", "ALL"),
    ]
    assert "inc/keep.yaml" in definition.bolts[1].bean.where  # entries name their own file


def test_resource_includes_and_nested_includes(tmp_path: Path) -> None:
    write(tmp_path, "configs/deep.yaml", "config: {deep: true}\n")
    write(tmp_path, "configs/middle.yaml", 'includes: [{file: "deep.yaml"}]\nconfig: {middle: 1}\n')
    main = write(
        tmp_path, "main.yaml", 'includes: [{resource: true, file: "/configs/middle.yaml"}]'
    )
    assert load(main).config == {"middle": 1, "deep": True}  # resources: from main.yaml's dir


def test_a_cycle_of_includes_is_an_error_naming_the_files(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", 'includes: [{file: "b.yaml"}]\n')
    write(tmp_path, "b.yaml", 'includes: [{file: "a.yaml"}]\n')
    with pytest.raises(ConfigurationError) as caught:
        load(tmp_path / "a.yaml")
    message = str(caught.value)
    assert f"flux file '{tmp_path / 'b.yaml'}', includes[0]: cycle of includes" in message
    assert f"{tmp_path / 'a.yaml'} -> {tmp_path / 'b.yaml'} -> {tmp_path / 'a.yaml'}" in message


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("spouts:\n  - id: s\n", r"spouts\[0\] \(id 's'\): missing className"),
        ("bolts:\n  - className: x.B\n", r"bolts\[0\]: missing id"),
        (
            "spouts:\n  - id: s\n    className: x.S\n    paralelism: 2\n",
            r"unknown keys \['paralelism'\]",
        ),
        (
            "spouts:\n  - id: s\n    className: x.S\n    parallelism: 0\n",
            "parallelism must be >= 1",
        ),
        (
            "spouts:\n  - {id: s, className: x.S}\n  - {id: s, className: x.T}\n",
            r"spouts: ids defined twice: \['s'\]",
        ),
        (
            "streams:\n  - {from: a, to: b, grouping: {type: RANDOM}}\n",
            r"streams\[0\] \(a --> b\): grouping type must be one of",
        ),
        (
            "streams:\n  - {from: a, to: b, grouping: {type: FIELDS}}\n",
            "a FIELDS grouping needs args",
        ),
        (
            "streams:\n  - {from: a, to: b, grouping: {type: CUSTOM}}\n",
            "a CUSTOM grouping needs customClass",
        ),
        ("streams:\n  - {from: a, grouping: {type: ALL}}\n", r"streams\[0\]: missing to"),
        (
            "includes:\n  - {file: nowhere.yaml}\n",
            r"includes\[0\]: included file .*nowhere.yaml' does not exist",
        ),
        ("workerHooks:\n  - {id: h, className: x.H}\n", "worker hooks are not supported"),
        ("- just\n- a list\n", "the file: expected a map of Flux sections"),
        ("name: [1]\n", "name: expected a str"),
        ("config: [1, 2]\n", "config: expected a map with str keys"),
        ("topologie: {}\n", r"the file: unknown keys \['topologie'\]"),
        (
            "bolts:\n  - id: b\n    className: x.B\n    properties: [{value: 1}]\n",
            r"properties\[0\]: missing name",
        ),
    ],
)
def test_bad_files_name_the_file_and_the_entry(tmp_path: Path, text: str, error: str) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigurationError, match=rf"flux file '{path}', .*{error}"):
        load(path)


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", "spouts: [\n")
    with pytest.raises(ConfigurationError, match=f"flux file '{path}' is not valid YAML"):
        load(path)
