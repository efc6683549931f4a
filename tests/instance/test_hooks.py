"""Task hooks in the instance: the hooked paths report what the plain ones did, in order,
with latencies on an injected clock; auto hooks load by class name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_router_paths import build, pplan_of

from heron_core.api import InputBatch, Tuple
from heron_core.api.hooks import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
    TaskHook,
)
from heron_core.client import load_topology, prepare
from heron_core.errors import UserCodeError
from heron_core.instance._hooks import (
    TaskHooks,
    hooked_process,
    hooked_process_batch,
    hooked_settle,
    load_auto_hooks,
)
from heron_core.instance._router import HookedRouter


class Recording(TaskHook):
    def __init__(self, calls: list[Any] | None = None) -> None:
        self.calls: list[Any] = [] if calls is None else calls

    def prepare(self, conf: dict[str, Any], context: Any) -> None:
        self.calls.append(("prepare", conf))

    def clean_up(self) -> None:
        self.calls.append("clean_up")

    def emit(self, emit_info: EmitInfo) -> None:
        self.calls.append(emit_info)

    def spout_ack(self, spout_ack_info: SpoutAckInfo) -> None:
        self.calls.append(spout_ack_info)

    def spout_fail(self, spout_fail_info: SpoutFailInfo) -> None:
        self.calls.append(spout_fail_info)

    def bolt_execute(self, bolt_execute_info: BoltExecuteInfo) -> None:
        self.calls.append(bolt_execute_info)

    def bolt_ack(self, bolt_ack_info: BoltAckInfo) -> None:
        self.calls.append(bolt_ack_info)

    def bolt_fail(self, bolt_fail_info: BoltFailInfo) -> None:
        self.calls.append(bolt_fail_info)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def hooks_with(*hooks: TaskHook, clock: Clock | None = None) -> TaskHooks:
    found = TaskHooks(4, "task 4", clock or Clock())
    for hook in hooks:
        found.add(hook)
    return found


def test_hooks_are_called_in_order_and_prepared_once() -> None:
    calls: list[Any] = []
    hooks = hooks_with(Recording(calls), Recording(calls))
    hooks.prepare({"k": 1}, None)
    hooks.add(Recording(calls))
    hooks.prepare({"k": 2}, None)
    assert calls == [("prepare", {"k": 1}), ("prepare", {"k": 1}), ("prepare", {"k": 2})]
    hooks.clean_up()
    assert calls[3:] == ["clean_up"] * 3
    with pytest.raises(TypeError, match=r"task 4: add_task_hook takes a heron_core\.api"):
        hooks.add(object())  # type: ignore[arg-type]


def test_a_hooked_router_reports_each_emit_after_routing_it() -> None:
    plan = pplan_of([("shuffle", 2, False), ("all", 2, True)])
    hook = Recording()
    hooks = hooks_with(hook)
    returned = []
    for component, task in (("src", 1), ("mid", 2)):
        router, wire, collector, _ = build(plan, component, task, False, True, 1)
        before = len(hook.calls)
        assert collector.emit(*((["k", 1], None) if component == "src" else (["k", 1],))) is None
        collector.hook_emits(hooks.emit)
        assert len(hook.calls) == before  # nothing reported before the hook
        assert isinstance(collector._router, HookedRouter)
        assert collector._router.routes is router.routes
        if component == "src":
            returned.append(collector.emit(["k", 2], None, "default", None, True))
            assert collector.emit(["s", 3], "m", None) is None  # None: the default stream
        else:
            returned.append(collector.emit(["k", 2], "default", None, None, True))
            assert collector.emit(["s", 3], None) is None
        router.flush()
        sent = [row for b in wire.batches if b[1] == "default" for row in b[2]]
        assert ["k", 2] in sent and ["s", 3] in sent  # routed as without the hook
    emits = [(c.values, c.stream_id, c.task_id) for c in hook.calls]
    assert emits == [(["k", 2], "default", 4), (["s", 3], "default", 4)] * 2
    assert [hook.calls[0].out_tasks, hook.calls[2].out_tasks] == returned
    assert [len(tasks) for tasks in returned] == [2, 1]  # src: "mid" and "sink0"; mid: "sink0"


def test_hooked_ack_fail_and_process_measure_on_the_clock() -> None:
    clock = Clock()
    hook = Recording()
    hooks = hooks_with(hook, clock=clock)
    tup = Tuple(None, "src", "default", 1, ["x"])
    tup._received = 99.5
    settled: list[str] = []
    hooked_settle(lambda t: settled.append("ack"), hooks.bolt_acked)(tup)
    hooked_settle(lambda t: settled.append("fail"), hooks.bolt_failed)(tup)

    def process(t: Tuple) -> None:
        clock.now += 0.25

    hooked_process(process, hooks)(tup)
    assert settled == ["ack", "fail"]
    assert hook.calls == [
        BoltAckInfo(tup, 4, 500.0),
        BoltFailInfo(tup, 4, 500.0),
        BoltExecuteInfo(tup, 4, 250.0),
    ]


def test_a_batch_reports_each_input_with_an_even_share() -> None:
    clock = Clock()
    hook = Recording()
    batch = InputBatch("src", "default", 1, [["a"], ["b"]])

    def process_batch(inputs: InputBatch) -> None:
        clock.now += 0.01

    hooked_process_batch(process_batch, hooks_with(hook, clock=clock))(batch)
    assert [(i.heron_tuple.values, round(i.execute_latency_ms, 6)) for i in hook.calls] == [
        (["a"], 5.0),
        (["b"], 5.0),
    ]


def test_a_batch_taken_one_by_one_reports_each_input_with_its_own_latency() -> None:
    """``batch.each`` (the Storm facade's bolts take their batches so) times every input, as
    Storm's boltExecute does; the batch is not reported again after the call."""
    clock = Clock()
    hook = Recording()
    batch = InputBatch("src", "default", 1, [["a"], ["bbb"], ["cc"]])

    def process(tup: Tuple) -> None:
        clock.now += 0.001 * len(tup.values[0])

    def process_batch(inputs: InputBatch) -> None:
        clock.now += 0.5  # work of the batch outside its inputs
        inputs.each(process)

    hooked_process_batch(process_batch, hooks_with(hook, clock=clock))(batch)
    assert [(i.heron_tuple.values, round(i.execute_latency_ms, 6)) for i in hook.calls] == [
        (["a"], 1.0),
        (["bbb"], 3.0),
        (["cc"], 2.0),
    ]
    batch.each(process)  # outside the hooked call: nothing is reported
    assert len(hook.calls) == 3


def test_spout_outcomes() -> None:
    hook = Recording()
    hooks = hooks_with(hook)
    hooks.spout_acked([("m1", "default", 99.0), ("m2", "s", 99.5)], 100.0)
    hooks.spout_acked_at_once("m3")
    hooks.spout_failed("m4", None)
    assert hook.calls == [
        SpoutAckInfo("m1", 4, 1000.0),
        SpoutAckInfo("m2", 4, 500.0),
        SpoutAckInfo("m3", 4, 0.0),
        SpoutFailInfo("m4", 4, None),
    ]


class Adapted:
    """A front end's hook: not a TaskHook, but it gives one."""

    def to_task_hook(self, context: Any) -> TaskHook:
        return Recording([("adapted for", context)])


def test_auto_hooks_load_by_name_and_adapt() -> None:
    loaded = load_auto_hooks([f"{__name__}:Recording", f"{__name__}.Adapted"], "ctx", "task 4")
    assert isinstance(loaded[0], Recording) and loaded[0].calls == []
    assert isinstance(loaded[1], Recording) and loaded[1].calls == [("adapted for", "ctx")]


class Broken:
    def __init__(self) -> None:
        raise RuntimeError("no")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nosuchmodule:Hook", "cannot build the hook: cannot import module 'nosuchmodule'"),
        (f"{__name__}:Broken", "cannot build the hook: no"),
        ("collections:OrderedDict", "OrderedDict is not a task hook"),
        (7, "expected a 'package.module:Class' string"),
    ],
)
def test_bad_auto_hooks_name_the_entry(name: Any, message: str) -> None:
    with pytest.raises(UserCodeError, match=message) as raised:
        load_auto_hooks([name], None, "task 4")
    assert str(raised.value).startswith(f"task 4: topology.auto.task.hooks entry {name!r}: ")


WORD_COUNT = Path(__file__).resolve().parents[2] / "topologies" / "word_count.py"


def test_a_bad_auto_hook_fails_the_submit_not_every_instance(tmp_path: Path) -> None:
    # Resolved at submit (prepare), so the executor does not restart instances that cannot
    # load it; a good entry passes.
    loaded = load_topology(str(WORD_COUNT))
    good = prepare(
        "local", loaded, [f'topology.auto.task.hooks=["{__name__}:Recording"]'], heron_home=tmp_path
    )
    assert good.config["topology.auto.task.hooks"] == [f"{__name__}:Recording"]
    with pytest.raises(UserCodeError) as raised:
        prepare(
            "local", loaded, ['topology.auto.task.hooks=["nosuchmodule:Hook"]'], heron_home=tmp_path
        )
    assert str(raised.value).startswith(
        "topology 'WordCount': topology.auto.task.hooks entry 'nosuchmodule:Hook': cannot build"
    )
