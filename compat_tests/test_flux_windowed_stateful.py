"""Flux YAML with Storm's windowed and stateful bolts: the file builds the same plan as the
``TopologyBuilder`` version (window settings in the component config, ``EFFECTIVELY_ONCE``
and the checkpoint interval for a stateful bolt), a bad window argument is an error naming
the file, the entry and the field, and (one process-level test) a windowed Flux topology
runs with the same windows as its ``TopologyBuilder`` twin in the same topology.

The Flux files name Storm's classes as Storm's Flux files do
(``org.apache.storm.topology.base.BaseWindowedBolt$Count``) and the suite's components by
their Python paths.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from compat_components import TrackedSpout
from compat_support import complete
from window_components import WindowSummer

from heron_core.errors import ConfigurationError
from heron_core.plan import ComponentDef, LogicalPlan, PythonSpec
from heron_core.windowing import (
    LATE_TUPLE_STREAM,
    LENGTH_COUNT,
    LENGTH_DURATION_MS,
    MAX_LAG_MS,
    SLIDING_COUNT,
    SLIDING_DURATION_MS,
    TIMESTAMP_FIELD,
    WATERMARK_INTERVAL_MS,
)
from storm_compat import StormTopology
from storm_compat.flux import load_definition, load_flux_topology
from storm_compat.flux._builder import build_topology
from storm_compat.state import KeyValueState
from storm_compat.state._executor import StatefulBoltAdapter
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import TestWordSpout
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseStatefulBolt, BaseWindowedBolt
from storm_compat.tuple import Fields, Tuple, Values

Count = BaseWindowedBolt.Count
Duration = BaseWindowedBolt.Duration

COUNTED = [[n] for n in range(1, 11)]
TIMED = [[n] for n in range(1, 31)]
TIMEOUT_S = 4

WINDOWS = """
name: flux-windows
config:
  topology.message.timeout.secs: TIMEOUT
components:
  - id: n
    className: org.apache.storm.tuple.Fields
    constructorArgs: [[n]]
  - id: four
    className: org.apache.storm.topology.base.BaseWindowedBolt$Count
    constructorArgs: [4]
  - id: two
    className: org.apache.storm.topology.base.BaseWindowedBolt$Count
    factory: of
    factoryArgs: [2]
  - id: tumble
    className: org.apache.storm.topology.base.BaseWindowedBolt$Duration
    constructorArgs: [300, MILLISECONDS]
spouts:
  - id: counted
    className: compat_components.TrackedSpout
    constructorArgs: [COUNTED, {ref: n}, "${events.dir}"]
  - id: timed
    className: compat_components.TrackedSpout
    constructorArgs: [TIMED, {ref: n}, "${events.dir}"]
bolts:
  - id: sliding
    className: window_components.WindowSummer
    configMethods:
      - name: withWindow
        args: [{ref: four}, {ref: two}]
  - id: tumbling
    className: window_components.WindowSummer
    configMethods:
      - name: withTumblingWindow
        args: [{ref: tumble}]
streams:
  - from: counted
    to: sliding
    grouping: {type: GLOBAL}
  - from: timed
    to: tumbling
    grouping: {type: GLOBAL}
"""
"""A sliding count window (4 tuples, every 2) and a tumbling duration window (300 ms): the
topology of ``test_storm_windowing.py``, in Flux."""

SLIDING = """
name: flux-sliding
config:
  topology.message.timeout.secs: TIMEOUT
components:
  - id: n
    className: org.apache.storm.tuple.Fields
    constructorArgs: [[n]]
  - id: four
    className: org.apache.storm.topology.base.BaseWindowedBolt$Count
    constructorArgs: [4]
  - id: two
    className: org.apache.storm.topology.base.BaseWindowedBolt$Count
    constructorArgs: [2]
spouts:
  - id: counted
    className: compat_components.TrackedSpout
    constructorArgs: [COUNTED, {ref: n}, "${events.dir}"]
bolts:
  - id: sliding
    className: window_components.WindowSummer
    configMethods:
      - {name: withWindow, args: [{ref: four}, {ref: two}]}
streams:
  - {from: counted, to: sliding, grouping: {type: GLOBAL}}
"""
"""The sliding count window of `WINDOWS` alone, for the run (fewer processes)."""

for _name, _value in (("TIMEOUT", TIMEOUT_S), ("COUNTED", COUNTED), ("TIMED", TIMED)):
    WINDOWS = WINDOWS.replace(_name, json.dumps(_value))
    SLIDING = SLIDING.replace(_name, json.dumps(_value))


def builder_version(events: str, prefix: str = "", tumbling: bool = True) -> StormTopology:
    """`WINDOWS` (without the tumbling window: `SLIDING`) written with ``TopologyBuilder``;
    its bolts' ids start with ``prefix``."""
    builder = TopologyBuilder()
    builder.setSpout("counted", TrackedSpout(COUNTED, Fields("n"), events))
    sliding = WindowSummer().withWindow(Count(4), Count.of(2))
    builder.setBolt(f"{prefix}sliding", sliding).globalGrouping("counted")
    if tumbling:
        builder.setSpout("timed", TrackedSpout(TIMED, Fields("n"), events))
        window = WindowSummer().withTumblingWindow(Duration(300, "MILLISECONDS"))
        builder.setBolt(f"{prefix}tumbling", window).globalGrouping("timed")
    return builder.createTopology()


class WordTotals(BaseStatefulBolt[KeyValueState[str, int]]):
    """Counts words in its state; emits ``(word, count)``."""

    def initState(self, state: KeyValueState[str, int]) -> None:
        self.counts = state

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        word = input.getStringByField("word")
        self.counts.put(word, self.counts.get(word, 0) + 1)
        self.collector.emit(input, Values(word, self.counts.get(word)))
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "count"))


STATEFUL = f"""
name: flux-state
config:
  topology.state.checkpoint.interval.ms: 500
spouts:
  - id: words
    className: org.apache.storm.testing.TestWordSpout
bolts:
  - id: count
    className: {__name__}.WordTotals
    parallelism: 2
streams:
  - from: words
    to: count
    grouping: {{type: FIELDS, args: [word]}}
"""


def flux(directory: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``text`` as ``windows.yaml`` in ``directory``, with a properties file for
    ``${events.dir}`` beside it (the directory goes on ``sys.path`` for this test only)."""
    path = directory / "windows.yaml"
    path.write_text(text)
    path.with_suffix(".properties").write_text(f"events.dir={directory}\n")
    monkeypatch.syspath_prepend(str(directory))
    return path


def without_objects(plan: LogicalPlan) -> list[ComponentDef]:
    """The plan's components with the pickled objects left out of their specs."""
    return [
        replace(c, spec=PythonSpec(c.spec.class_path)) if isinstance(c.spec, PythonSpec) else c
        for c in plan.components
    ]


def test_window_components_build_the_plan_of_the_topology_builder_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = load_flux_topology(flux(tmp_path, WINDOWS, monkeypatch)).plan
    sliding, tumbling = plan.component("sliding").config, plan.component("tumbling").config
    assert (sliding[LENGTH_COUNT], sliding[SLIDING_COUNT]) == (4, 2)
    assert LENGTH_DURATION_MS not in sliding and SLIDING_DURATION_MS not in sliding
    assert (tumbling[LENGTH_DURATION_MS], tumbling[SLIDING_DURATION_MS]) == (300, 300)
    assert LENGTH_COUNT not in tumbling and SLIDING_COUNT not in tumbling
    assert tumbling["topology.tick.tuple.freq.secs"] > 0  # its timers need ticks
    expected = builder_version(str(tmp_path)).to_logical_plan(
        "flux-windows", {"topology.message.timeout.secs": TIMEOUT_S}
    )
    assert without_objects(plan) == without_objects(expected)
    assert plan.config == expected.config


def test_event_time_config_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = WINDOWS.replace("[[n]]", "[[n, ts]]").replace(
        "        args: [{ref: tumble}]\n",
        """        args: [{ref: tumble}]
      - name: withTimestampField
        args: [ts]
      - name: withLag
        args: [{ref: lag}]
      - name: withWatermarkInterval
        args: [{ref: watermarks}]
      - name: withLateTupleStream
        args: [late]
""",
    )
    text = text.replace(
        "spouts:\n",
        """  - id: lag
    className: org.apache.storm.topology.base.BaseWindowedBolt$Duration
    factory: seconds
    factoryArgs: [2]
  - id: watermarks
    className: org.apache.storm.topology.base.BaseWindowedBolt$Duration
    constructorArgs: [100, MILLISECONDS]
spouts:
""",
    )
    plan = load_flux_topology(flux(tmp_path, text, monkeypatch)).plan
    tumbling = plan.component("tumbling")
    config = tumbling.config
    assert (config[TIMESTAMP_FIELD], config[MAX_LAG_MS]) == ("ts", 2000)
    assert (config[WATERMARK_INTERVAL_MS], config[LATE_TUPLE_STREAM]) == (100, "late")
    late = [s for s in tumbling.outputs if s.stream_id == "late"]
    assert [s.fields for s in late] == [("late_tuple",)]


def test_a_stateful_bolt_runs_effectively_once_as_with_the_topology_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = load_flux_topology(flux(tmp_path, STATEFUL, monkeypatch)).plan
    assert plan.config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
    assert plan.config["topology.stateful.checkpoint.interval.seconds"] == 0.5
    count = plan.component("count")
    assert isinstance(count.spec, PythonSpec)
    adapter = pickle.loads(count.spec.pickled_object)
    assert isinstance(adapter, StatefulBoltAdapter)
    builder = TopologyBuilder()
    builder.setSpout("words", TestWordSpout())
    builder.setBolt("count", WordTotals(), 2).fieldsGrouping("words", Fields("word"))
    expected = builder.createTopology().to_logical_plan(
        "flux-state", {"topology.state.checkpoint.interval.ms": 500}
    )
    assert without_objects(plan) == without_objects(expected)
    assert plan.config == expected.config


WINDOW_ERRORS = [
    pytest.param(
        ("constructorArgs: [4]", 'constructorArgs: ["four"]'),
        r"components\[1\] \(id 'four'\), constructorArgs: "
        r"org\.apache\.storm\.topology\.base\.BaseWindowedBolt\$Count\('four'\): Count takes an "
        r"int, got 'four'; a BaseWindowedBolt\$Count is a number of tuples: constructorArgs: \[n\]",
        id="count-not-an-int",
    ),
    pytest.param(
        ("[300, MILLISECONDS]", "[300, FORTNIGHTS]"),
        r"components\[3\] \(id 'tumble'\), constructorArgs: .*unknown time unit 'FORTNIGHTS'.*"
        r"constructorArgs: \[n, UNIT\], UNIT the name of a java\.util\.concurrent\.TimeUnit",
        id="unknown-time-unit",
    ),
    pytest.param(
        ("factoryArgs: [2]", "factoryArgs: [-2]"),
        rf"flux file '.*windows\.yaml': config key '{SLIDING_COUNT}' \(from the config of "
        r"topology 'flux-windows', component 'sliding'\): expected >= 1, got -2",
        id="negative-count",
    ),
    pytest.param(
        ("args: [{ref: four}, {ref: two}]", "args: [4, {ref: two}]"),
        r"bolts\[0\] \(id 'sliding'\), configMethods\[0\] \(withWindow\): .*the window length "
        r"must be a BaseWindowedBolt\.Count or BaseWindowedBolt\.Duration, got 4; .*className "
        r"org\.apache\.storm\.topology\.base\.BaseWindowedBolt\$Count or \$Duration, passed as "
        r"\{ref: <component id>\}",
        id="window-length-not-a-count",
    ),
    pytest.param(
        ("constructorArgs: [4]", "constructorArgs: [0]"),
        rf"flux file '.*windows\.yaml': config key '{LENGTH_COUNT}' \(from the config of "
        r"topology 'flux-windows', component 'sliding'\): expected >= 1, got 0",
        id="zero-length",
    ),
    pytest.param(
        ("args: [{ref: four}, {ref: two}]", "args: [{ref: two}, {ref: four}]"),
        rf"flux file '.*windows\.yaml': .*component 'sliding' .*{SLIDING_COUNT}: the sliding "
        r"interval \(4 events\) is longer than the window \(2 events\)",
        id="slide-longer-than-the-window",
    ),
    pytest.param(
        (
            "        args: [{ref: tumble}]\n",
            "        args: [{ref: tumble}]\n      - {name: withLag, args: [{ref: tumble}]}\n",
        ),
        rf"flux file '.*windows\.yaml': .*component 'tumbling' .*{MAX_LAG_MS}: withLag \(300\) "
        r"needs event time",
        id="lag-without-event-time",
    ),
    pytest.param(
        (
            "window_components.WindowSummer\n    configMethods:\n      - name: withWindow\n"
            "        args: [{ref: four}, {ref: two}]\n",
            "storm_compat.tuple.Fields\n",
        ),
        r"bolts\[0\] \(id 'sliding'\): storm_compat\.tuple\.Fields is not a bolt: expected a Storm "
        r"IRichBolt/IBasicBolt/IWindowedBolt/IStatefulBolt",
        id="not-a-bolt",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("change", "error"), WINDOW_ERRORS)
def test_a_bad_window_is_an_error_naming_the_file_the_component_and_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str], error: str
) -> None:
    old, new = change
    assert old in WINDOWS
    path = flux(tmp_path, WINDOWS.replace(old, new, 1), monkeypatch)
    with pytest.raises(ConfigurationError) as caught:
        load_flux_topology(path)
    assert str(path) in str(caught.value)
    assert caught.match(error)


def test_a_stateful_bolt_in_another_mode_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = STATEFUL.replace("config:\n", "config:\n  topology.reliability.mode: ATMOST_ONCE\n")
    path = flux(tmp_path, text, monkeypatch)
    with pytest.raises(ConfigurationError, match=rf"^flux file '{path}': topology 'flux-state'.*"):
        load_flux_topology(path)


@pytest.mark.processes
def test_a_flux_windowed_topology_gives_the_windows_of_its_builder_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Flux file's sliding count window and its ``TopologyBuilder`` twin, added to the
    same topology, read the same spout in one run."""
    path = flux(tmp_path, SLIDING, monkeypatch)
    config = dict(load_definition(path, {}).config)

    def both(events: str) -> StormTopology:
        topology = build_topology(load_definition(path, {"events.dir": events}))
        twin = builder_version(events, "builder_", tumbling=False).components
        return topology.with_component(next(c for c in twin if c.id == "builder_sliding"))

    run = complete(tmp_path / "run", both, 1, config)
    sliding = [w[:4] for w in run.tuples("sliding")]
    assert sliding == [w[:4] for w in run.tuples("builder_sliding")], run.logs
    assert sliding == [
        [3, [1, 2], [1, 2], []],
        [10, [1, 2, 3, 4], [3, 4], []],
        [18, [3, 4, 5, 6], [5, 6], [1, 2]],
        [26, [5, 6, 7, 8], [7, 8], [3, 4]],
        [34, [7, 8, 9, 10], [9, 10], [5, 6]],
    ], run.logs
    # both windows expire the same tuples; the last window's time out, as in Storm
    assert run.outcomes("counted") == outcome(acked=range(1, 7), failed=range(7, 11))


def outcome(acked: range, failed: range) -> dict[str, list[list[int]]]:
    """``Run.outcomes`` of a spout whose tuples ``[n]`` were acked or failed as given."""
    return {
        "ack": sorted(([n] for n in acked), key=repr),
        "fail": sorted(([n] for n in failed), key=repr),
    }
