"""Command-line ``key=value`` parsing."""

from __future__ import annotations

import pytest

from heron_core.config import build_config, parse_override
from heron_core.errors import ConfigurationError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("topology.debug=true", True),
        ("topology.debug=TRUE", True),
        ("topology.debug=Yes", True),
        ("topology.debug=1", True),
        ("topology.debug=false", False),
        ("topology.debug=No", False),
        ("topology.debug=0", False),
    ],
)
def test_bool_words(text: str, expected: bool) -> None:
    assert parse_override(text) == ("topology.debug", expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("topology.stmgrs=3", ("topology.stmgrs", 3)),
        ("topology.workers=3", ("topology.workers", 3)),
        (" topology.stmgrs = 3 ", ("topology.stmgrs", 3)),
        ("topology.component.cpu=0.5", ("topology.component.cpu", 0.5)),
        ("topology.component.cpu=2", ("topology.component.cpu", 2.0)),
        ("topology.name=a=b", ("topology.name", "a=b")),
        ("topology.name=", ("topology.name", "")),
        ('topology.environment={"A": "1"}', ("topology.environment", {"A": "1"})),
        ('topology.kryo.register=["m.H"]', ("topology.kryo.register", ["m.H"])),
        ("topology.max.spout.pending=null", ("topology.max.spout.pending", None)),
        ("topology.max.spout.pending=None", ("topology.max.spout.pending", None)),
        ("topology.max.spout.pending=500", ("topology.max.spout.pending", 500)),
        ("topology.reliability.mode=ATMOST_ONCE", ("topology.reliability.mode", "ATMOST_ONCE")),
    ],
)
def test_registered_keys_are_coerced_by_type(text: str, expected: tuple[str, object]) -> None:
    key, value = parse_override(text)
    assert (key, value) == expected
    assert type(value) is type(expected[1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my.count=5", 5),
        ("my.ratio=0.25", 0.25),
        ("my.flag=true", True),
        ("my.list=[1, 2]", [1, 2]),
        ('my.obj={"a": null}', {"a": None}),
        ("my.word=hello", "hello"),
        ("my.word=", ""),
        ("my.nothing=null", None),
    ],
)
def test_user_keys_try_json_then_keep_the_string(text: str, expected: object) -> None:
    assert parse_override(text) == (text.partition("=")[0], expected)


@pytest.mark.parametrize("text", ["topology.debug", "", "=3", "  =x"])
def test_missing_equals_or_key_is_a_clear_error(text: str) -> None:
    with pytest.raises(ConfigurationError, match="expected 'key=value'"):
        parse_override(text)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("topology.debug=maybe", r"'topology\.debug'.*command line.*'maybe' as bool"),
        ("topology.stmgrs=two", r"'topology\.stmgrs'.*'two' as int"),
        ("topology.stmgrs=2.5", r"'2\.5' as int"),
        ("topology.component.cpu=lots", r"'lots' as float"),
        ("topology.environment={oops", r"'\{oops' as dict"),
        ("topology.environment=[1]", r"expected dict, got \[1\] \(list\)"),
        ("topology.stmgrs=null", r"'null' as int"),
        ("topology.stmgrs=0", r"expected >= 1"),
        ("topology.reliability.mode=sometimes", r"expected one of"),
        ("topology.stmgr=2", r"unknown config key 'topology\.stmgr'.*'topology\.stmgrs'"),
    ],
)
def test_bad_values_name_key_and_layer(text: str, pattern: str) -> None:
    with pytest.raises(ConfigurationError, match=pattern) as info:
        parse_override(text)
    assert "command line" in str(info.value)


def test_overrides_feed_build_config_and_detect_alias_conflicts() -> None:
    overrides = dict(map(parse_override, ["topology.workers=2", "topology.debug=yes"]))
    cfg = build_config(overrides=overrides)
    assert (cfg["topology.stmgrs"], cfg["topology.debug"]) == (2, True)
    conflicting = dict(map(parse_override, ["topology.workers=2", "topology.stmgrs=3"]))
    with pytest.raises(ConfigurationError, match="command line sets both"):
        build_config(overrides=conflicting)
