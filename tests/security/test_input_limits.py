"""The YAML and JSON files a user hands over are read with size, alias-expansion and depth
limits (`heron_core.config.load_yaml`): an alias bomb ("billion laughs") or a huge file fails
at once with a message naming the file, through the loader, the Flux parser, a cluster config
and ``heron run``; files with ordinary anchors and aliases still load.

Attacker: whoever can get a user to run a Flux file, or write a cluster config the CLI reads.
Without the limits, a 1 KB Flux file whose ``config:`` holds an alias bomb makes ``heron run``
grow without end (the control below shows the bomb is real: plain `yaml.safe_load` gives a
value that expands to millions of nodes)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from heron_core.client import load_topology
from heron_core.config import (
    MAX_ALIAS_NODES,
    MAX_INPUT_BYTES,
    load_cluster_config,
    load_json_file,
    load_yaml,
)
from heron_core.errors import ConfigurationError
from storm_compat.flux import load_definition
from storm_compat.streamparse import SparseProject

HERON = str(Path(sys.executable).with_name("heron"))

FAST_S = 2.0
"""What "at once" means for a refused file here: the loader takes well under 10 ms."""

HERON_RUN_RSS = 300 << 20
"""What ``heron run`` may reach on the way to refusing a bomb (it starts at about 45 MB)."""


def bomb(levels: int, width: int = 9, indent: str = "") -> str:
    """An alias bomb: ``levels`` anchors, each a list of ``width`` aliases of the one before,
    expanding to ``width ** levels`` strings; a few hundred bytes."""
    lines = [f"{indent}l0: &l0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def expanded_nodes(value: Any) -> int:
    """How many nodes a consumer walking ``value`` visits (shared objects once per place)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def flux_bomb(tmp_path: Path) -> Path:
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\nconfig:\n" + bomb(9, indent="  "))
    assert len(path.read_bytes()) < 1024
    return path


def test_control_plain_safe_load_expands_a_smaller_bomb() -> None:
    value = yaml.safe_load(bomb(6))  # 9**6 = 531441 strings from 300 bytes
    assert expanded_nodes(value) > 5 * MAX_ALIAS_NODES
    with pytest.raises(ConfigurationError, match="expands too much"):
        load_yaml(bomb(6), "small-bomb.yaml")


def test_the_loader_refuses_a_bomb_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(ConfigurationError) as refused:
        load_yaml(bomb(12), "bomb.yaml")  # 9**12 strings
    assert time.monotonic() - started < FAST_S
    message = str(refused.value)
    assert message.startswith("bomb.yaml expands too much: its aliases repeat ")
    assert f"more than the limit of {MAX_ALIAS_NODES}" in message


def test_a_document_that_contains_itself_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="holds an alias of itself"):
        load_yaml("a: &a {b: *a}\n", "self.yaml")


def test_deep_nesting_is_refused_with_a_message() -> None:
    with pytest.raises(ConfigurationError, match="nests its YAML too deeply"):
        load_yaml("- " * 200 + "x\n", "deep.yaml")


def test_the_flux_parser_refuses_a_bomb_naming_the_file(tmp_path: Path) -> None:
    path = flux_bomb(tmp_path)
    started = time.monotonic()
    with pytest.raises(ConfigurationError) as refused:
        load_definition(path, {})
    assert time.monotonic() - started < FAST_S
    assert str(refused.value).startswith(f"flux file '{path}' expands too much")


def test_a_bomb_in_an_included_flux_file_is_refused_naming_it(tmp_path: Path) -> None:
    included = flux_bomb(tmp_path)
    main = tmp_path / "main.yaml"
    main.write_text(f"name: main\nincludes:\n  - file: {included.name}\n")
    with pytest.raises(ConfigurationError, match=f"flux file '{included}' expands too much"):
        load_definition(main, {})


def test_a_cluster_config_bomb_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(bomb(9))
    with pytest.raises(ConfigurationError) as refused:
        load_cluster_config("bomb", tmp_path)
    assert str(refused.value).startswith(f"cluster config {tmp_path / 'bomb.yaml'} expands too")


@pytest.fixture(name="started")
def started_fixture() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; each still running at teardown is killed by pid (with its
    process group: ``heron run`` starts its children in its own)."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(psutil.NoSuchProcess):
                for child in psutil.Process(process.pid).children(recursive=True):
                    child.kill()
            process.kill()
            process.communicate()


@pytest.mark.processes
def test_heron_run_of_a_flux_bomb_fails_at_once(
    tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    path = flux_bomb(tmp_path)
    argv = [HERON, "run", str(path), "--heron-home", str(tmp_path / "home")]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    started.append(process)
    watched = psutil.Process(process.pid)
    peak, began = 0, time.monotonic()
    while process.poll() is None and time.monotonic() - began < 120:
        with contextlib.suppress(psutil.NoSuchProcess):
            peak = max(peak, watched.memory_info().rss)
        assert peak < HERON_RUN_RSS, f"heron run grew to {peak >> 20} MB on a 1 KB bomb"
        time.sleep(0.01)
    out, err = process.communicate(timeout=60)
    took = time.monotonic() - began
    print(
        f"heron run refused the bomb in {took:.2f} s (start-up included), peak RSS {peak >> 20} MB"
    )
    assert process.returncode == 2, (out, err)
    assert f"flux file '{path}' expands too much" in err
    assert "Traceback" not in err


def test_a_huge_file_is_refused_naming_its_size(tmp_path: Path) -> None:
    size = MAX_INPUT_BYTES + 100
    path = tmp_path / "huge.yaml"
    path.write_text("name: huge\n" + "#" * (size - 12) + "\n")
    assert path.stat().st_size == size
    with pytest.raises(ConfigurationError) as refused:
        load_definition(path, {})
    assert str(refused.value) == (
        f"flux file '{path}' is too large ({size} bytes): the limit is {MAX_INPUT_BYTES} bytes"
    )
    (tmp_path / "huge-cluster.yaml").write_bytes(path.read_bytes())
    with pytest.raises(ConfigurationError, match=rf"huge-cluster\.yaml is too large \({size}"):
        load_cluster_config("huge-cluster", tmp_path)


def test_a_huge_streamparse_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"topology_specs": "topologies/", "pad": "x" * MAX_INPUT_BYTES}))
    with pytest.raises(ConfigurationError, match=rf"{path} is too large \(\d+ bytes\)"):
        SparseProject.load(path)


def test_a_stream_without_end_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"/dev/zero is too large \(endless\)"):
        load_json_file("/dev/zero", "/dev/zero")


def test_substitution_cannot_push_a_flux_file_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "grown.yaml"
    path.write_text("name: grown\nconfig:\n" + "".join(f"  k{i}: ${{big}}\n" for i in range(5)))
    started = time.monotonic()
    with pytest.raises(ConfigurationError, match=r"grown\.yaml' is too large after substitution"):
        load_definition(path, {"big": "x" * (MAX_INPUT_BYTES // 4)})
    many = tmp_path / "many.yaml"  # half a million references to a 4 MiB value: never built
    many.write_text("name: many\nconfig:\n  k: " + "${big}" * (MAX_INPUT_BYTES // 8) + "\n")
    with pytest.raises(ConfigurationError, match=r"many\.yaml' is too large after substitution"):
        load_definition(many, {"big": "x" * MAX_INPUT_BYTES})
    assert time.monotonic() - started < FAST_S


ALIASED_FLUX = """\
name: aliased
config:
  topology.workers: 1
  shared: &shared {threshold: 3, tags: [a, b]}
  again: *shared
  merged:
    <<: *shared
    threshold: 4
spouts:
  - id: words
    className: org.apache.storm.testing.TestWordSpout
    parallelism: 2
    config: &component {topology.tick.tuple.freq.secs: 5}
bolts:
  - id: count
    className: org.apache.storm.testing.TestWordCounter
    parallelism: 2
    config: *component
streams:
  - from: words
    to: count
    grouping: &by_word {type: FIELDS, args: [word]}
"""


def test_a_flux_file_with_ordinary_anchors_and_aliases_loads(tmp_path: Path) -> None:
    path = tmp_path / "aliased.yaml"
    path.write_text(ALIASED_FLUX)
    definition = load_definition(path, {})
    assert definition.config["again"] == {"threshold": 3, "tags": ["a", "b"]}
    assert definition.config["merged"] == {"threshold": 4, "tags": ["a", "b"]}
    assert definition.bolts[0].config == definition.spouts[0].config
    assert definition.streams[0].grouping.args == ("word",)
    plan = load_topology(str(path)).plan
    assert [c.name for c in plan.components] == ["words", "count"]
    assert plan.config["merged"] == {"threshold": 4, "tags": ["a", "b"]}


SOURCE = st.text(alphabet=st.sampled_from(list("&*ab:- ,[]{}|>!'\"#\n?%@`\\0\t<=")), max_size=120)


def _anchored(parts: list[tuple[str, int]]) -> str:
    """A document of anchors that each repeat earlier ones: random shapes of alias graphs."""
    lines = []
    for i, (kind, times) in enumerate(parts):
        earlier = [f"*a{j}" for j in range(i)] or ["x"]
        items = ", ".join(earlier[k % len(earlier)] for k in range(times))
        value = (
            f"[{items}]"
            if kind == "list"
            else "{" + ", ".join(f"k{k}: {earlier[k % len(earlier)]}" for k in range(times)) + "}"
        )
        lines.append(f"a{i}: &a{i} {value}")
    return "\n".join(lines) + "\n"


ANCHORED = st.lists(
    st.tuples(st.sampled_from(["list", "map"]), st.integers(1, 12)), max_size=12
).map(_anchored)


@settings(max_examples=300)
@given(st.one_of(SOURCE, ANCHORED))
@example("a: &a [*a]")
@example("? &k [1]\n: *k\n")
@example(bomb(12))
def test_the_loader_gives_a_value_or_a_clear_error(text: str) -> None:
    started = time.monotonic()
    try:
        value = load_yaml(text, "fuzz.yaml")
    except ConfigurationError as exc:
        assert str(exc).startswith("fuzz.yaml")
    else:
        assert expanded_nodes(value) <= MAX_ALIAS_NODES + len(text) + 1
    assert time.monotonic() - started < FAST_S
