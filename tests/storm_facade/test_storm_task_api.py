"""Storm's task hooks over the kernel's, the rest of TopologyContext, the collectors' flush and
getPendingCount, and Config's setters (unit tests on fakes of the kernel's side)."""

from __future__ import annotations

from typing import Any

import pytest
from storm_support import (
    FakeBoltCollector,
    FakeContext,
    FakeSpoutCollector,
    FlushingSpoutCollector,
)

from heron_core.api import GlobalStreamId, Grouping
from heron_core.api import Tuple as NativeTuple
from heron_core.api import hooks as native
from storm_compat import Config
from storm_compat.hooks import BaseTaskHook
from storm_compat.hooks._hooks import KernelTaskHook
from storm_compat.hooks.info import EmitInfo
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology._adapters import BoltAdapter
from storm_compat.tuple import Fields, Tuple

WHERE = "topology 't', component 'bolt', task 3"


class Recording(BaseTaskHook):
    """Records ``(callback, info or args)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        self.calls.append(("prepare", context.getThisTaskId()))

    def cleanup(self) -> None:
        self.calls.append(("cleanup", None))

    def emit(self, info: EmitInfo) -> None:
        self.calls.append(("emit", info))

    def spoutAck(self, info: Any) -> None:
        self.calls.append(("spoutAck", info))

    def spoutFail(self, info: Any) -> None:
        self.calls.append(("spoutFail", info))

    def boltExecute(self, info: Any) -> None:
        self.calls.append(("boltExecute", info))

    def boltAck(self, info: Any) -> None:
        self.calls.append(("boltAck", info))

    def boltFail(self, info: Any) -> None:
        self.calls.append(("boltFail", info))


def context() -> FakeContext:
    return FakeContext(
        "count",
        task=7,
        tasks={"count": [6, 7], "split": [3, 4, 5]},
        fields={("split", "default"): ["word"], ("count", "totals"): ["word", "n"]},
        sources={GlobalStreamId("split", "default"): Grouping.fields("word")},
        config={"topology.message.timeout.secs": 12},
    )


def test_add_task_hook_prepares_it_and_registers_it_with_the_kernel() -> None:
    native_context = context()
    storm = TopologyContext(native_context)
    hook = Recording()
    storm.addTaskHook(hook)
    assert hook.calls == [("prepare", 7)]
    (kernel_hook,) = native_context.hooks
    assert isinstance(kernel_hook, KernelTaskHook) and kernel_hook.hook is hook
    assert storm.getHooks() == [hook]
    with pytest.raises(TypeError, match=r"addTaskHook takes a storm_compat\.hooks\.ITaskHook"):
        storm.addTaskHook(object())  # type: ignore[arg-type]


def test_an_auto_hook_is_prepared_when_the_kernel_asks_for_its_kernel_hook() -> None:
    hook = Recording()
    kernel_hook = hook.to_task_hook(context())
    assert isinstance(kernel_hook, native.TaskHook) and hook.calls == [("prepare", 7)]
    kernel_hook.prepare({}, context())  # the kernel's prepare: already done, Storm's order
    assert hook.calls == [("prepare", 7)]


def test_kernel_records_become_storm_records() -> None:
    hook = Recording()
    kernel_hook = KernelTaskHook(hook, context())
    storm_tuple = Tuple.of(["x"], Fields("word"), component="split")
    tick = NativeTuple(None, "__system", "__tick", -1, [1.0])
    kernel_hook.emit(native.EmitInfo(("a",), "totals", 7, [1, 2]))
    kernel_hook.spout_ack(native.SpoutAckInfo("m", 7, 2.6))
    kernel_hook.spout_fail(native.SpoutFailInfo("m", 7, None))
    kernel_hook.bolt_execute(native.BoltExecuteInfo(tick, 7, 0.4))
    kernel_hook.bolt_ack(native.BoltAckInfo(storm_tuple, 7, 1.5))
    kernel_hook.bolt_fail(native.BoltFailInfo(storm_tuple, 7, 0.0))
    kernel_hook.clean_up()
    emit, ack, fail, execute, bolt_ack, bolt_fail, cleanup = hook.calls
    assert emit[1].values == ["a"] and (emit[1].stream, emit[1].taskId) == ("totals", 7)
    assert emit[1].outTasks == [1, 2]
    assert (ack[1].messageId, ack[1].spoutTaskId, ack[1].completeLatencyMs) == ("m", 7, 3)
    assert (fail[1].messageId, fail[1].failLatencyMs) == ("m", None)
    assert execute[1].tuple.isTick() and execute[1].tuple.getValueByField("rate_secs") == 1.0
    assert execute[1].executeLatencyMs == 0 and execute[1].executingTaskId == 7
    assert bolt_ack[1].tuple is storm_tuple and bolt_ack[1].processLatencyMs == 2
    assert bolt_fail[1].tuple is storm_tuple and bolt_fail[1].failingTaskId == 7
    assert cleanup == ("cleanup", None)


def test_info_records_apply_on_a_contexts_hooks() -> None:
    storm = TopologyContext(context())
    first, second = Recording(), Recording()
    storm.addTaskHook(first)
    storm.addTaskHook(second)
    info = EmitInfo(["a"], "default", 7, [3])
    info.applyOn(storm)
    assert first.calls[-1] == ("emit", info) and second.calls[-1] == ("emit", info)


def test_context_names_of_the_topology() -> None:
    storm = TopologyContext(context())
    assert storm.getComponentIds() == {"count", "split"}
    assert storm.getTaskToComponent() == {
        3: "split",
        4: "split",
        5: "split",
        6: "count",
        7: "count",
    }
    assert (storm.getComponentId(4), storm.getComponentId(-1), storm.getComponentId(99)) == (
        "split",
        "__system",
        None,
    )
    assert storm.getThisStreams() == {"totals"} and storm.getComponentStreams("split") == {
        "default"
    }
    assert storm.getThisOutputFieldsForStreams() == {"totals": ["word", "n"]}
    assert storm.getThisInputFields() == {"split": {"default": ["word"]}}
    assert storm.getComponentOutputFields(GlobalStreamId("split")) == Fields("word")
    assert storm.getSources("split") == {}
    assert storm.getTargets("split") == {"default": {"count": Grouping.fields("word")}}
    assert storm.getThisWorkerTasks() == [7] and storm.maxTopologyMessageTimeout() == 12
    with pytest.raises(ValueError, match="no output fields defined for component:stream count:x"):
        storm.getThisOutputFields("x")
    with pytest.raises(ValueError, match="no component 'nope' in the topology"):
        storm.getComponentStreams("nope")
    with pytest.raises(ValueError, match="no component 'nope'"):
        storm.getSources("nope")
    with pytest.raises(NotImplementedError, match="getRawTopology: the running topology"):
        storm.getRawTopology()


def test_task_data_and_the_shared_executor() -> None:
    storm = TopologyContext(context())
    storm.setTaskData("a", 1)
    storm.setExecutorData("b", 2)
    assert (storm.getTaskData("a"), storm.getExecutorData("b"), storm.getTaskData("z")) == (
        1,
        2,
        None,
    )
    shared = storm.getSharedExecutor()
    assert shared is TopologyContext(context()).getSharedExecutor()
    assert shared.submit(sum, [1, 2]).result(timeout=10) == 3


def test_bolt_close_shuts_the_shared_executor_down() -> None:
    adapter = BoltAdapter(_Nothing(), [])
    shared = TopologyContext(context()).getSharedExecutor()
    adapter.close()
    with pytest.raises(RuntimeError, match="shutdown"):
        shared.submit(sum, [1])
    assert TopologyContext(context()).getSharedExecutor() is not shared


class _Nothing:
    def cleanup(self) -> None:
        """Nothing to release."""


def test_collectors_flush_and_count_pending() -> None:
    kernel = FlushingSpoutCollector()
    spout = SpoutOutputCollector(kernel, WHERE)
    spout.flush()
    assert kernel.calls == [("flush",)] and spout.getPendingCount() == 3
    with pytest.raises(NotImplementedError, match=f"{WHERE}: FakeSpoutCollector has no flush"):
        SpoutOutputCollector(FakeSpoutCollector(), WHERE).flush()
    with pytest.raises(NotImplementedError, match="has no pending_count"):
        SpoutOutputCollector(FakeSpoutCollector(), WHERE).getPendingCount()
    with pytest.raises(NotImplementedError, match=f"{WHERE}: flush: FakeBoltCollector"):
        OutputCollector(FakeBoltCollector(), WHERE).flush()


def test_spout_emit_direct_forms() -> None:
    kernel = FakeSpoutCollector()
    spout = SpoutOutputCollector(kernel, WHERE)
    spout.emitDirect(4, ["a"])
    spout.emitDirect(4, ["b"], "id-b")
    spout.emitDirect(4, "side", ["c"])
    spout.emitDirect(4, "side", ["d"], "id-d")
    assert kernel.calls == [
        (["a"], None, "default", 4, False),
        (["b"], "id-b", "default", 4, False),
        (["c"], None, "side", 4, False),
        (["d"], "id-d", "side", 4, False),
    ]


def test_config_setters_for_honoured_keys_and_plain_dicts() -> None:
    conf = Config()
    conf.setEnableMessageTimeouts(False)
    conf.setTickTupleFrequency(2)
    conf.setAutoTaskHooks([Recording, "pkg.mod.Hook"])
    conf.setMultilangSerializer("msgpack")
    conf.setShellBoltMaxPending(5)
    conf.setSubprocessTimeoutSecs(9)
    conf.setSleepSpoutWaitStrategyTimeMs(3)
    assert dict(conf) == {
        "topology.enable.message.timeouts": False,
        "topology.tick.tuple.freq.secs": 2,
        "topology.auto.task.hooks": [f"{__name__}:Recording", "pkg.mod.Hook"],
        "topology.multilang.serializer": "msgpack",
        "topology.shellbolt.max.pending": 5,
        "topology.subprocess.timeout.secs": 9,
        "topology.sleep.spout.wait.strategy.time.ms": 3,
    }
    plain: dict[str, Any] = {}
    Config.setNumWorkers(plain, 2)  # type: ignore[arg-type]
    Config.setMaxSpoutPending(plain, 7)  # type: ignore[arg-type]
    assert plain == {"topology.workers": 2, "topology.max.spout.pending": 7}


@pytest.mark.parametrize(
    ("setter", "args", "why"),
    [
        ("registerMetricsConsumer", ("my.Consumer", 1), "heron.metrics.sinks"),
        ("registerEventLogger", ("my.Logger",), "no event logger"),
        ("registerDecorator", ("my.Decorator",), "no Kryo"),
        ("setClasspath", ("a.jar",), "no JVM"),
        ("setTopologyVersion", ("1",), "not versioned"),
        ("setTopologyStrategy", ("my.Strategy",), "heron.packing.algorithm"),
        ("setTopologyPriority", (1,), "no topology priorities"),
        ("setTopologyComponentWorkerConstraints", ("a", "b"), "no placement constraints"),
        ("setTopologyConstraintsMaxStateSearch", (10,), "no placement constraints"),
    ],
)
def test_setters_nothing_honours_raise(setter: str, args: tuple[Any, ...], why: str) -> None:
    conf = Config()
    with pytest.raises(NotImplementedError, match=f"Config.{setter}.*cannot be honoured: .*{why}"):
        getattr(conf, setter)(*args)
    assert conf == {}
