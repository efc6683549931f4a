"""Storm's stateful bolts on the kernel's effectively-once contract, driven by hand: the
adapter the builder puts in the plan goes through ``init_state`` -> ``initialize`` ->
``process`` -> ``pre_save`` -> a pickle round trip of its state -> ``restart_from_state`` with
an older checkpoint; ``KeyValueState``'s semantics; the facade's mode and interval mapping."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from heron_core.api import (
    GlobalStreamId,
    Grouping,
    HashMapState,
    InputBatch,
    StatefulComponent,
)
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.errors import ConfigurationError, TopologyValidationError, UserCodeError
from storm_compat.state import InMemoryKeyValueState, KeyValueState
from storm_compat.state._executor import StatefulBoltAdapter, checkpoint_txid
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import TestWordSpout
from storm_compat.topology import IStatefulBolt, OutputFieldsDeclarer, TopologyBuilder
from storm_compat.topology.base import BaseStatefulBolt
from storm_compat.tuple import Fields, Tuple, Values

CHECKPOINT_1 = "1700000000000-000001"
CHECKPOINT_2 = "1700000000000-000002"
TXID_1 = 1700000000000000001
TXID_2 = 1700000000000000002


class Context(NativeContext):
    """Task 3 of "count", fed by "words" (field "word"), in topology "wc"."""

    def get_task_id(self) -> int:
        return 3

    def get_component_id(self) -> str:
        return "count"

    def get_cluster_config(self) -> dict[str, Any]:
        return {}

    def get_topology_name(self) -> str:
        return "wc"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        return {GlobalStreamId("words", "default"): Grouping.fields(["word"])}

    def get_component_tasks(self, component_id: str) -> list[int]:
        return [3]

    def get_topology_id(self) -> str:
        return "wc-1"

    def get_component_index(self) -> int:
        return 0

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return ("word",)

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return {}

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        raise NotImplementedError


class Collector:
    """The kernel's bolt collector, recording ``(kind, values)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Any]]] = []

    def emit(
        self,
        tup: Sequence[Any],
        stream: str,
        anchors: Iterable[NativeTuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        self.calls.append(("emit", list(tup)))
        return None

    def ack(self, tup: NativeTuple) -> None:
        self.calls.append(("ack", tup.values))

    def fail(self, tup: NativeTuple) -> None:
        self.calls.append(("fail", tup.values))


class WordCount(BaseStatefulBolt[KeyValueState[str, int]]):
    """Storm's stateful word count, recording every framework call in ``events``."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.fail_in: str | None = None

    def _record(self, *event: Any) -> None:
        self.events.append(event)
        if self.fail_in == event[0]:
            raise RuntimeError(f"{event[0]} broke")

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        self._record("prepare", context.getThisComponentId())

    def initState(self, state: KeyValueState[str, int]) -> None:
        self.counts = state
        self._record("initState", dict(state))

    def execute(self, input: Tuple) -> None:
        word = input.getStringByField("word")
        count = (self.counts.get(word) or 0) + 1
        self.counts.put(word, count)
        self.collector.emit(input, Values(word, count))
        self.collector.ack(input)

    def prePrepare(self, txid: int) -> None:
        self._record("prePrepare", txid)

    def preCommit(self, txid: int) -> None:
        self._record("preCommit", txid)

    def preRollback(self) -> None:
        self._record("preRollback", dict(self.counts))

    def cleanup(self) -> None:
        self._record("cleanup")

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("word", "count"))


def _builder(bolt: Any = None) -> TopologyBuilder:
    builder = TopologyBuilder()
    builder.setSpout("words", TestWordSpout())
    builder.setBolt("count", bolt or WordCount(), 2).fieldsGrouping("words", Fields("word"))
    return builder


def _planned_adapter() -> StatefulBoltAdapter:
    """The bolt's component as an instance unpickles it from the plan."""
    plan = _builder().createTopology().to_logical_plan("wc")
    spec: Any = plan.component("count").spec
    adapter = pickle.loads(spec.pickled_object)
    assert isinstance(adapter, StatefulBoltAdapter)
    return adapter


def _feed(adapter: StatefulBoltAdapter, *words: str) -> None:
    for n, word in enumerate(words):
        tup = InputBatch("words", "default", 1, [[word]], kind=adapter.tuple_type).tuple(0)
        tup.id = f"t{n}"  # as the runtime builds an input
        adapter.process(tup)


def _saved(state: HashMapState) -> HashMapState:
    """What the runtime stores and later gives back: the state, pickled and unpickled."""
    restored = pickle.loads(pickle.dumps(state))
    assert isinstance(restored, HashMapState)
    return restored


def test_the_plan_runs_a_stateful_bolt_as_a_stateful_kernel_component() -> None:
    adapter = _planned_adapter()
    assert isinstance(adapter, StatefulComponent)
    assert isinstance(adapter.bolt, WordCount)
    assert [s.fields for s in adapter.outputs] == [("word", "count")]


def test_storms_call_order_and_state_through_checkpoints_and_a_rollback() -> None:
    adapter = _planned_adapter()
    collector = Collector()
    adapter._collector = collector
    first = HashMapState()  # no checkpoint yet: empty
    adapter.init_state(first)
    adapter.initialize({}, Context())
    bolt: Any = adapter.bolt
    state = bolt.counts
    assert isinstance(state, InMemoryKeyValueState)
    assert bolt.events == [("prepare", "count"), ("initState", {})]

    _feed(adapter, "storm", "heron", "storm")
    assert collector.calls[-2:] == [("emit", ["storm", 2]), ("ack", ["storm"])]
    adapter.pre_save(CHECKPOINT_1)
    assert bolt.events[-2:] == [("prePrepare", TXID_1), ("preCommit", TXID_1)]
    assert dict(first) == {"storm": 2, "heron": 1}  # what the runtime pickles
    at_1 = _saved(first)

    _feed(adapter, "heron", "flink")
    adapter.pre_save(CHECKPOINT_2)
    assert dict(first) == {"storm": 2, "heron": 2, "flink": 1}
    _feed(adapter, "storm")  # not checkpointed

    # a failure elsewhere: back to checkpoint 1, in the same state object
    adapter.restart_from_state(at_1, {}, Context())
    assert bolt.events[-1] == ("preRollback", {"storm": 3, "heron": 2, "flink": 1})
    assert bolt.counts is state
    assert dict(state) == {"storm": 2, "heron": 1}
    _feed(adapter, "storm")
    assert collector.calls[-2] == ("emit", ["storm", 3])

    # the next checkpoint saves into the state the rollback handed over
    adapter.pre_save("1700000000000-000003")
    assert dict(at_1) == {"storm": 3, "heron": 1}
    adapter.close()
    kinds = [event[0] for event in bolt.events]
    assert kinds == [
        "prepare",
        "initState",
        *["prePrepare", "preCommit"] * 2,
        "preRollback",
        "prePrepare",
        "preCommit",
        "cleanup",
    ]


def test_a_task_that_starts_from_a_checkpoint_sees_its_key_values_in_init_state() -> None:
    adapter = _planned_adapter()
    adapter._collector = Collector()
    adapter.init_state(_saved(HashMapState({"storm": 5})))
    adapter.initialize({}, Context())
    bolt: Any = adapter.bolt
    assert bolt.events == [("prepare", "count"), ("initState", {"storm": 5})]
    # what was restored is committed: a rollback before any checkpoint returns to it
    _feed(adapter, "storm")
    bolt.counts.rollback()
    assert dict(bolt.counts) == {"storm": 5}


def test_a_stateful_bolt_outside_effectively_once_fails_naming_the_task() -> None:
    adapter = _planned_adapter()
    adapter._collector = Collector()
    with pytest.raises(ConfigurationError) as raised:
        adapter.initialize({"topology.reliability.mode": "ATLEAST_ONCE"}, Context())
    message = str(raised.value)
    assert "topology 'wc', component 'count', task 3" in message
    assert "WordCount" in message and "'ATLEAST_ONCE'" in message


@pytest.mark.parametrize("hook", ["initState", "prePrepare", "preRollback"])
def test_a_hook_that_raises_is_a_user_code_error_naming_it(hook: str) -> None:
    bolt = WordCount()
    bolt.fail_in = hook
    adapter = StatefulBoltAdapter(bolt, [])
    adapter._collector = Collector()
    adapter.init_state(HashMapState())
    with pytest.raises(UserCodeError, match=rf"component 'count', task 3: WordCount\.{hook}\(\)"):
        adapter.initialize({}, Context())
        adapter.pre_save(CHECKPOINT_1)
        adapter.restart_from_state(HashMapState(), {}, Context())


def test_checkpoint_ids_become_txids_in_the_same_order() -> None:
    ids = ["1700000000000-000002", "1700000000000-000010", "1700000000999-000001"]
    assert sorted(ids) == ids
    txids = [checkpoint_txid(i) for i in ids]
    assert txids == sorted(txids) and len(set(txids)) == 3
    assert txids[1] < 2**63  # a Java long, as Storm's txid
    with pytest.raises(ValueError, match="'ckpt-1'"):
        checkpoint_txid("ckpt-1")


def test_key_value_state_operations() -> None:
    state: InMemoryKeyValueState[str, int] = InMemoryKeyValueState()
    state.put("a", 1)
    state.put("b", 2)
    assert state.get("a") == 1
    assert state.get("z") is None and state.get("z", 7) == 7
    assert state.delete("a") == 1 and state.delete("a") is None
    state.put("c", 3)
    for entry in state:  # a snapshot: deleting while iterating is allowed
        state.delete(entry.getKey())
    assert list(state.iterator()) == []
    state.put("d", 4)
    assert [(key, value) for key, value in state] == [("d", 4)]


def test_key_value_state_prepare_commit_and_rollback() -> None:
    state: InMemoryKeyValueState[str, int] = InMemoryKeyValueState()
    state.put("a", 1)
    state.rollback()  # nothing committed: empty
    assert dict(state) == {}
    state.put("a", 1)
    state.prepareCommit(5)
    state.put("a", 2)  # after the prepare: not part of txid 5
    state.prepareCommit(5)  # the same txid again: allowed, snapshots now
    with pytest.raises(RuntimeError, match="cannot prepare txid 6 while txid 5"):
        state.prepareCommit(6)
    with pytest.raises(RuntimeError, match="cannot commit txid 4: the prepared txid is 5"):
        state.commit(4)
    state.commit(5)
    state.put("a", 3)
    state.rollback()
    assert dict(state) == {"a": 2}
    state.put("a", 4)  # the committed snapshot is not shared with the live state
    state.rollback()
    assert dict(state) == {"a": 2}
    with pytest.raises(RuntimeError, match="prepared txid is None"):
        state.commit(6)
    state.put("b", 1)
    state.commit()  # no txid: the current key/values are committed as they are
    state.put("b", 2)
    state.rollback()
    assert dict(state) == {"a": 2, "b": 1}


def test_base_stateful_bolt_needs_init_state_and_execute() -> None:
    assert BaseStatefulBolt.__abstractmethods__ == {"initState", "execute"}
    assert issubclass(BaseStatefulBolt, IStatefulBolt)
    with pytest.raises(TopologyValidationError, match="IStatefulBolt"):
        TopologyBuilder().setBolt("count", object())  # type: ignore[arg-type]


def _config(conf: dict[str, Any] | None, bolt: Any = None) -> dict[str, Any]:
    return _builder(bolt).createTopology().to_logical_plan("wc", conf).config


def test_a_stateful_topology_runs_effectively_once_every_storm_interval() -> None:
    config = _config({})
    assert config["topology.reliability.mode"] == "EFFECTIVELY_ONCE"
    assert config["topology.stateful.checkpoint.interval.seconds"] == 1.0  # Storm's 1000 ms
    config = _config(
        {
            "topology.state.checkpoint.interval.ms": 250,
            "topology.reliability.mode": "EFFECTIVELY_ONCE",
            "topology.state.provider": "org.apache.storm.state.InMemoryKeyValueStateProvider",
        }
    )
    assert config["topology.stateful.checkpoint.interval.seconds"] == 0.25
    assert "topology.state.checkpoint.interval.ms" not in config
    assert "topology.state.provider" not in config
    assert (
        _config({"topology.stateful.checkpoint.interval.seconds": 3.0})[
            "topology.stateful.checkpoint.interval.seconds"
        ]
        == 3.0
    )


def test_a_topology_without_stateful_bolts_keeps_its_mode() -> None:
    plain = TopologyBuilder()
    plain.setSpout("words", TestWordSpout())
    config = plain.createTopology().to_logical_plan("wc", {}).config
    assert config.get("topology.reliability.mode", "ATLEAST_ONCE") == "ATLEAST_ONCE"
    assert "topology.stateful.checkpoint.interval.seconds" not in config


@pytest.mark.parametrize("mode", ["ATLEAST_ONCE", "ATMOST_ONCE"])
def test_a_stateful_bolt_with_another_mode_is_refused_at_submit(mode: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _config({"topology.reliability.mode": mode})
    message = str(raised.value)
    assert message.startswith("topology 'wc', component 'count': a stateful bolt")
    assert f"'topology.reliability.mode' = '{mode}'" in message


@pytest.mark.parametrize(
    ("conf", "match"),
    [
        ({"topology.state.checkpoint.interval.ms": 0}, "must be a positive number"),
        ({"topology.state.checkpoint.interval.ms": "500"}, "got '500'"),
        (
            {
                "topology.state.checkpoint.interval.ms": 500,
                "topology.stateful.checkpoint.interval.seconds": 2.0,
            },
            "disagree",
        ),
        (
            {"topology.state.provider": "org.apache.storm.redis.state.RedisKeyValueStateProvider"},
            "only Storm's org.apache.storm.state.InMemoryKeyValueStateProvider",
        ),
    ],
)
def test_bad_state_settings_name_the_topology_and_key(conf: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match) as raised:
        _config(conf)
    assert str(raised.value).startswith("topology 'wc': 'topology.state.")


class RewindingSpout(TestWordSpout, StatefulComponent):
    """A Storm spout that mixes in the kernel's StatefulComponent to keep its position."""

    def init_state(self, state: Any) -> None:
        self.state = state

    def pre_save(self, checkpoint_id: str) -> None:
        self.state.put("saved at", checkpoint_id)


def test_a_storm_spout_that_mixes_in_stateful_component_gets_its_state() -> None:
    """Storm has no stateful spouts; one that mixes in ``heron_core.api.StatefulComponent``
    gets ``init_state`` and ``pre_save`` through its adapter (so it can rewind); any other
    Storm spout's adapter is no StatefulComponent (the instance warns that it cannot)."""
    builder = TopologyBuilder()
    builder.setSpout("words", RewindingSpout())
    builder.setSpout("plain", TestWordSpout())
    builder.setBolt("count", WordCount()).shuffleGrouping("words").shuffleGrouping("plain")
    plan = builder.createTopology().to_logical_plan("wc")
    spec: Any = plan.component("words").spec
    adapter = pickle.loads(spec.pickled_object)
    assert isinstance(adapter, StatefulComponent)
    state = HashMapState()
    adapter.init_state(state)
    adapter.pre_save(CHECKPOINT_1)
    assert dict(state.items()) == {"saved at": CHECKPOINT_1}
    plain: Any = plan.component("plain").spec
    assert not isinstance(pickle.loads(plain.pickled_object), StatefulComponent)
