"""The rest of Storm's task API through real processes: every TopologyContext name, the
collectors' flush, getPendingCount, resetTimeout and emitDirect forms, task hooks added in
``open`` and through ``topology.auto.task.hooks`` (Config.setAutoTaskHooks), and the Config
setters, in one topology run once with two containers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compat_support import Run, complete
from storm_api_components import DIR_KEY, ApiSpout, DirectSpout, HookRecorder, Sink, Worker

from storm_compat import Config, StormTopology
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes

WORDS = ["a", "b", "c", "boom"]


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", ApiSpout(WORDS), 1)
    builder.setSpout("dsrc", DirectSpout(), 1)
    builder.setBolt("work", Worker(), 2).fieldsGrouping("src", Fields("word"))
    builder.setBolt("sink", Sink(), 1).directGrouping("dsrc").directGrouping("dsrc", "side")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    directory = tmp_path_factory.mktemp("storm-api")
    records = directory / "records"
    records.mkdir()
    conf = Config({DIR_KEY: str(records)})
    conf.setAutoTaskHooks([HookRecorder])
    conf.setMessageTimeoutSecs(60)
    conf.setEnableMessageTimeouts(True)
    conf.setMaxSpoutPending(10)
    conf.setSleepSpoutWaitStrategyTimeMs(2)
    return complete(directory / "run", topology, 2, conf), records


def contexts(records: Path, component: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(records.glob(f"context-{component}-*"))]


def hooks(records: Path, label: str, component: str) -> dict[int, list[dict[str, Any]]]:
    """``{task: hook calls}`` of the hooks labelled ``label`` in ``component``'s tasks."""
    found = {}
    for path in records.glob(f"hooks-{label}-{component}-*.jsonl"):
        task = int(path.stem.rpartition("-")[2])
        found[task] = [json.loads(line) for line in path.read_text().splitlines()]
    return found


def test_topology_context_answers_every_storm_name(run: tuple[Run, Path]) -> None:
    _, records = run
    (src,) = contexts(records, "src")
    workers = contexts(records, "work")
    tasks = src["tasks"]
    capture = next(c for c in src["component_ids"] if c.startswith("capture-"))
    assert src["component_ids"] == sorted(["src", "dsrc", "work", "sink", capture])
    assert {t: c for c, ts in tasks.items() for t in ts} == {
        int(t): c for t, c in src["task_to_component"].items()
    }
    assert sorted(w["task"] for w in workers) == tasks["work"]
    assert sorted(w["index"] for w in workers) == [0, 1]
    for context in [src, *workers]:
        assert context["tasks"][context["component"]].index(context["task"]) == context["index"]
        assert context["task"] in context["worker_tasks"]
        assert context["worker_tasks"] == sorted(context["worker_tasks"])
        assert context["storm_id"] == src["storm_id"] and context["storm_id"]
        assert context["system_component"] == "__system"
        assert context["work_fields"] == ["upper"]
        assert context["work_sources"] == [["src", "default", "FIELDS"]]
        assert context["src_targets"] == {"default": sorted(["work", capture])}
        assert context["code_dir_is_cwd"] and context["timeout"] == 60
        assert context["task_data"] == [[1], "x"]
        assert context["shared_executor"] == 42 and context["same_executor"]
        assert context["errors"] == {
            "undeclared_stream": "ValueError",
            "unknown_component": "ValueError",
            "raw_topology": "NotImplementedError",
            "worker_port": "NotImplementedError",
            "pid_dir": "NotImplementedError",
            "resource": "NotImplementedError",
            "subscribed_state": "NotImplementedError",
            "not_a_hook": "TypeError",
        }
    all_tasks = sorted(t for ts in tasks.values() for t in ts)
    containers = {tuple(c["worker_tasks"]) for c in [src, *workers]}
    assert sorted(t for c in containers for t in c) == sorted(set().union(*containers))
    assert set().union(*containers) <= set(all_tasks)
    assert src["streams"] == ["default"] and src["fields"] == ["word"]
    assert src["fields_by_stream"] == {"default": ["word"]} and src["sources"] == []
    assert src["targets"] == src["src_targets"]
    assert src["input_fields"] == {}
    for worker in workers:
        assert worker["streams"] == ["default"] and worker["fields"] == ["upper"]
        assert worker["sources"] == [["src", "default", "FIELDS"]]
        assert worker["input_fields"] == {"src": {"default": ["word"]}}
        assert worker["targets"] == {"default": [capture]}


def test_hooks_added_in_open_and_auto_hooks_see_every_event(run: tuple[Run, Path]) -> None:
    result, records = run
    (src,) = contexts(records, "src")
    (worker, *_) = contexts(records, "work")
    # auto hooks are added and prepared before open/prepare; the added one after them
    assert src["hooks_at_start"] == [
        ["HookRecorder", "auto", True],
        ["HookRecorder", "added", True],
    ]
    assert src["hooks_after_add"] == 2
    assert worker["hooks_at_start"] == [["HookRecorder", "auto", True]]
    work_tasks = src["tasks"]["work"]
    capture_tasks = next(ts for c, ts in src["tasks"].items() if c.startswith("capture-"))
    for label in ("added", "auto"):
        ((task, calls),) = hooks(records, label, "src").items()
        assert calls[0] == {"event": "prepare", "task": task} and calls[-1]["event"] == "cleanup"
        emits = [c for c in calls if c["event"] == "emit"]
        assert sorted(e["values"][0] for e in emits) == sorted(WORDS)
        for emit in emits:
            assert emit["stream"] == "default" and emit["task"] == task
            (to_work,) = set(emit["out"]) & set(work_tasks)
            assert set(emit["out"]) - {to_work} <= set(capture_tasks)
        acks = [c for c in calls if c["event"] == "spoutAck"]
        fails = [c for c in calls if c["event"] == "spoutFail"]
        assert len(acks) == 3 and len(fails) == 1
        assert all(isinstance(a["latency"], int) and a["latency"] >= 0 for a in acks)
        assert fails[0]["latency"] is None
        assert len({c["id"] for c in acks + fails}) == len(WORDS)
    work = hooks(records, "auto", "work")
    assert sorted(work) == work_tasks
    executed = [c for calls in work.values() for c in calls if c["event"] == "boltExecute"]
    assert sorted(c["values"][0] for c in executed) == sorted(WORDS)
    assert all(c["source"] == "src" and c["latency"] >= 0 for c in executed)
    acked = [c for calls in work.values() for c in calls if c["event"] == "boltAck"]
    failed = [c for calls in work.values() for c in calls if c["event"] == "boltFail"]
    assert sorted(c["values"][0] for c in acked) == ["a", "b", "c"]
    assert [c["values"] for c in failed] == [["boom"]]
    assert all(c["latency"] >= 0 and c["task"] in work_tasks for c in acked + failed)
    uppers = [c for calls in work.values() for c in calls if c["event"] == "emit"]
    assert sorted(c["values"][0] for c in uppers) == ["A", "B", "C"]
    assert all(c["out"] == capture_tasks for c in uppers)
    assert sorted(result.tuples("work")) == [["A"], ["B"], ["C"]]
    # every task of the topology got the auto hook, the capture bolt included
    assert all(hooks(records, "auto", c) for c in src["tasks"])


def test_spout_collector_emit_direct_forms_pending_count_and_flush(
    run: tuple[Run, Path],
) -> None:
    _, records = run
    (src,) = contexts(records, "src")
    sink_task = src["tasks"]["sink"][0]
    ((_, direct_calls),) = hooks(records, "auto", "dsrc").items()
    emits = [(c["stream"], c["values"], c["out"]) for c in direct_calls if c["event"] == "emit"]
    assert sorted(emits) == [
        ("default", ["t1"], [sink_task]),
        ("default", ["u1"], [sink_task]),
        ("side", ["t2"], [sink_task]),
        ("side", ["u2"], [sink_task]),
    ]
    direct_acks = sorted(c["id"] for c in direct_calls if c["event"] == "spoutAck")
    assert direct_acks == ["direct-1", "direct-2"]  # only the emits with a message id
    ((_, sink_calls),) = hooks(records, "auto", "sink").items()
    got = sorted((c["stream"], c["values"][0]) for c in sink_calls if c["event"] == "boltExecute")
    assert got == [("default", "t1"), ("default", "u1"), ("side", "t2"), ("side", "u2")]
    (calls,) = records.glob("calls-src-*.jsonl")
    answers = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(answers) == len(WORDS)
    # pending counts the spout's trees in flight, the one just emitted included
    assert all(a["pending"] == a["held"] >= 1 for a in answers)
