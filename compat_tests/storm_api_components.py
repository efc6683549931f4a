"""Spouts, bolts and a task hook that call the rest of Storm's task API (TopologyContext,
collectors, hooks) and write what they saw to JSON files, for ``test_storm_api_hooks.py``.

Instance processes import this module from the topology's code directory (a copy of
``compat_tests/``), so it imports nothing but the facade. Every file goes to the directory
under the config key ``compat.api.dir``: ``context-<component>-<task>.json`` (what the
context says), ``hooks-<label>-<component>-<task>.jsonl`` (one line per hook call) and
``calls-<component>-<task>.jsonl`` (what the collectors answered).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from storm_compat.hooks import BaseTaskHook
from storm_compat.hooks.info import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
)
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing import FixedTuple, FixedTupleSpout
from storm_compat.topology import OutputFieldsDeclarer
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Fields, Tuple, Values

DIR_KEY = "compat.api.dir"


def _append(directory: str, name: str) -> IO[str]:
    return (Path(directory) / name).open("a", buffering=1)


class HookRecorder(BaseTaskHook):
    """Writes one JSON line per hook call. Built with no arguments it is the auto hook
    (``topology.auto.task.hooks``, label "auto"); spouts add one labelled "added"."""

    def __init__(self, label: str = "auto") -> None:
        self.label = label
        self.prepared = False

    def _write(self, event: str, **fields: Any) -> None:
        self._out.write(json.dumps({"event": event, **fields}) + "\n")

    def prepare(self, conf: dict[str, Any], context: TopologyContext) -> None:
        name = f"hooks-{self.label}-{context.getThisComponentId()}-{context.getThisTaskId()}"
        self._out = _append(conf[DIR_KEY], name + ".jsonl")
        self.prepared = True
        self._write("prepare", task=context.getThisTaskId())

    def cleanup(self) -> None:
        self._write("cleanup")

    def emit(self, info: EmitInfo) -> None:
        self._write(
            "emit",
            values=list(info.values),
            stream=info.stream,
            task=info.taskId,
            out=sorted(info.outTasks),
        )

    def spoutAck(self, info: SpoutAckInfo) -> None:
        self._write(
            "spoutAck", id=info.messageId, task=info.spoutTaskId, latency=info.completeLatencyMs
        )

    def spoutFail(self, info: SpoutFailInfo) -> None:
        self._write(
            "spoutFail", id=info.messageId, task=info.spoutTaskId, latency=info.failLatencyMs
        )

    def boltExecute(self, info: BoltExecuteInfo) -> None:
        self._write(
            "boltExecute",
            values=info.tuple.getValues(),
            source=info.tuple.getSourceComponent(),
            stream=info.tuple.getSourceStreamId(),
            task=info.executingTaskId,
            latency=info.executeLatencyMs,
        )

    def boltAck(self, info: BoltAckInfo) -> None:
        self._write(
            "boltAck",
            values=info.tuple.getValues(),
            task=info.ackingTaskId,
            latency=info.processLatencyMs,
        )

    def boltFail(self, info: BoltFailInfo) -> None:
        self._write(
            "boltFail",
            values=info.tuple.getValues(),
            task=info.failingTaskId,
            latency=info.failLatencyMs,
        )


def _raises(call: Any) -> str:
    """The name of the exception ``call()`` raises (``"none"`` if it returns)."""
    try:
        call()
    except Exception as exc:
        return type(exc).__name__
    return "none"


def describe(conf: dict[str, Any], context: TopologyContext) -> dict[str, Any]:
    """What every TopologyContext name answers in this task."""
    me = context.getThisComponentId()
    context.setTaskData("k", [1])
    context.setExecutorData("e", "x")
    shared = context.getSharedExecutor()
    return {
        "component": me,
        "task": context.getThisTaskId(),
        "index": context.getThisTaskIndex(),
        "tasks": {c: context.getComponentTasks(c) for c in sorted(context.getComponentIds())},
        "component_ids": sorted(context.getComponentIds()),
        "streams": sorted(context.getThisStreams()),
        "fields": context.getThisOutputFields().toList(),
        "fields_by_stream": context.getThisOutputFieldsForStreams(),
        "work_fields": context.getComponentOutputFields("work", "default").toList(),
        "sources": sorted(
            [s.component_id, s.stream_id, g.kind.name] for s, g in context.getThisSources().items()
        ),
        "work_sources": sorted(
            [s.component_id, s.stream_id, g.kind.name]
            for s, g in context.getSources("work").items()
        ),
        "input_fields": context.getThisInputFields(),
        "targets": {s: sorted(c) for s, c in context.getThisTargets().items()},
        "src_targets": {s: sorted(c) for s, c in context.getTargets("src").items()},
        "task_to_component": {str(t): c for t, c in context.getTaskToComponent().items()},
        "system_component": context.getComponentId(-1),
        "storm_id": context.getStormId(),
        "worker_tasks": context.getThisWorkerTasks(),
        "code_dir_is_cwd": context.getCodeDir() == os.getcwd(),
        "task_data": [context.getTaskData("k"), context.getExecutorData("e")],
        "shared_executor": shared.submit(lambda: 6 * 7).result(timeout=30),
        "same_executor": shared is context.getSharedExecutor(),
        "timeout": context.maxTopologyMessageTimeout(),
        "hooks_at_start": [[type(h).__name__, h.label, h.prepared] for h in context.getHooks()],
        "errors": {
            "undeclared_stream": _raises(lambda: context.getComponentOutputFields(me, "nope")),
            "unknown_component": _raises(lambda: context.getComponentStreams("nope")),
            "raw_topology": _raises(context.getRawTopology),
            "worker_port": _raises(context.getThisWorkerPort),
            "pid_dir": _raises(context.getPIDDir),
            "resource": _raises(lambda: context.getResource("r")),
            "subscribed_state": _raises(lambda: context.setSubscribedState("s", object())),
            "not_a_hook": _raises(lambda: context.addTaskHook(object())),  # type: ignore[arg-type]
        },
    }


def _save_context(conf: dict[str, Any], context: TopologyContext, extra: dict[str, Any]) -> None:
    found = describe(conf, context) | extra
    name = f"context-{context.getThisComponentId()}-{context.getThisTaskId()}.json"
    (Path(conf[DIR_KEY]) / name).write_text(json.dumps(found))


class ApiSpout(FixedTupleSpout):
    """Emits its fixed words with message ids; adds a hook in ``open``; after each emit
    records ``getPendingCount`` and flushes."""

    def __init__(self, words: list[str]) -> None:
        super().__init__([[w] for w in words], Fields("word"))

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        super().open(conf, context, collector)
        hook = HookRecorder("added")
        context.addTaskHook(hook)
        _save_context(conf, context, {"hooks_after_add": len(context.getHooks())})
        self._calls = _append(conf[DIR_KEY], f"calls-src-{context.getThisTaskId()}.jsonl")

    def nextTuple(self) -> None:
        before = self._next
        super().nextTuple()
        if self._next > before:
            self._collector.flush()
            pending = self._collector.getPendingCount()
            self._calls.write(json.dumps({"pending": pending, "held": len(self.pending)}) + "\n")


class DirectSpout(FixedTupleSpout):
    """Emits with every ``emitDirect`` form to task 0 of "sink": first, untracked,
    ``emitDirect(task, values)`` and ``emitDirect(task, "side", values)``; then its fixed
    tuples tracked, with ``emitDirect(task, values, id)`` (default stream) and
    ``emitDirect(task, "side", values, id)``."""

    def __init__(self) -> None:
        super().__init__([FixedTuple(["t1"]), FixedTuple(["t2"], "side")], None)

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        super().open(conf, context, collector)
        self._target = context.getComponentTasks("sink")[0]
        self._untracked = [(Values("u1"),), ("side", Values("u2"))]

    def nextTuple(self) -> None:
        if self._untracked:
            self._collector.emitDirect(self._target, *self._untracked.pop(0))
            return
        if self._next < len(self._serve):
            fixed = self._serve[self._next]
            self._next += 1
            message_id = f"direct-{self._next}"
            self.pending[message_id] = fixed
            if fixed.stream == "default":
                self._collector.emitDirect(self._target, fixed.values, message_id)
            else:
                self._collector.emitDirect(self._target, fixed.stream, fixed.values, message_id)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(True, Fields("n"))
        declarer.declareStream("side", True, Fields("n"))


class Worker(BaseRichBolt):
    """Upper-cases each word anchored to it, resets its timeout and acks it, flushing
    after each; fails "boom"."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector
        _save_context(topoConf, context, {})

    def execute(self, input: Tuple) -> None:
        word = input.getStringByField("word")
        if word == "boom":
            self.collector.fail(input)
            return
        self.collector.emit(input, Values(word.upper()))
        self.collector.resetTimeout(input)
        self.collector.ack(input)
        self.collector.flush()

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("upper"))


class Sink(BaseRichBolt):
    """Acks every input (what it got shows in its hooks' ``boltExecute`` lines)."""

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self.collector = collector

    def execute(self, input: Tuple) -> None:
        self.collector.ack(input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing: a sink."""
