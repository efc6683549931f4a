"""Fakes of the kernel's side for the in-process pystorm adapters, and ``sparse quickstart``."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heron_core.api import GlobalStreamId, Grouping, TopologyContext
from heron_core.api import Tuple as NativeTuple

SHIM = '''"""setuptools >= 81 dropped pkg_resources; streamparse 5.0.1 still imports it."""
import importlib, os
from packaging.version import parse as parse_version
def resource_filename(package, resource):
    return os.path.join(os.path.dirname(importlib.import_module(package).__file__), resource)
'''


def quickstart(directory: Path, name: str = "wordcount") -> Path:
    """Run the real ``sparse quickstart NAME`` in ``directory``; the project's path.

    streamparse 5.0.1 imports ``pkg_resources``, which setuptools >= 81 no longer ships:
    when it is missing, a two-function stand-in goes on the command's PYTHONPATH.
    """
    env = dict(os.environ, LEIN_ROOT="1")  # sparse refuses to run as root without it
    if importlib.util.find_spec("pkg_resources") is None:
        shim = directory / "_pkg_resources_shim"
        shim.mkdir()
        (shim / "pkg_resources.py").write_text(SHIM)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim), env.get("PYTHONPATH")]))
    sparse = Path(sys.executable).with_name("sparse")
    done = subprocess.run(
        [str(sparse), "quickstart", name], cwd=directory, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"sparse quickstart failed:\n{done.stdout}\n{done.stderr}"
    return directory / name


class FakeContext(TopologyContext):
    """Task ``task`` of ``component`` in topology "t"; ``sources`` are its inputs."""

    def __init__(
        self,
        component: str,
        task: int,
        *,
        tasks: Mapping[str, list[int]],
        fields: Mapping[tuple[str, str], Sequence[str]],
        sources: Mapping[GlobalStreamId, Grouping] | None = None,
        targets: Mapping[str, dict[str, Grouping]] | None = None,
    ) -> None:
        self.component = component
        self.task = task
        self.tasks = dict(tasks)
        self.fields = dict(fields)
        self.sources = dict(sources or {})
        self.targets = dict(targets or {})
        self.metrics: dict[str, Any] = {}

    def get_task_id(self) -> int:
        return self.task

    def get_component_id(self) -> str:
        return self.component

    def get_cluster_config(self) -> dict[str, Any]:
        return {}

    def get_topology_name(self) -> str:
        return "t"

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        return dict(self.sources) if component_id == self.component else None

    def get_component_tasks(self, component_id: str) -> list[int]:
        return list(self.tasks.get(component_id, []))

    def get_topology_id(self) -> str:
        return "t-1"

    def get_component_index(self) -> int:
        return 0

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return tuple(self.fields.get((component_id, stream), ()))

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        return dict(self.targets)

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        self.metrics[name] = metric


class FakeCollector:
    """Records what the adapter does on the native side. ``emit`` takes a bolt collector's
    parameters, with the kernel's defaults (None is the default stream, as there), and returns
    the task list [7] when ``need_task_ids``, else None; every emit is recorded with all five."""

    def __init__(self) -> None:
        self.emits: list[tuple[Any, ...]] = []
        self.acked: list[NativeTuple] = []
        self.failed: list[NativeTuple] = []

    def emit(
        self,
        tup: Any,
        stream: str | None = "default",
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        self.emits.append((tup, stream or "default", anchors, direct_task, need_task_ids))
        return [7] if need_task_ids else None

    def ack(self, tup: NativeTuple) -> None:
        self.acked.append(tup)

    def fail(self, tup: NativeTuple) -> None:
        self.failed.append(tup)


class FakeSpoutCollector(FakeCollector):
    """`FakeCollector` with a spout collector's ``emit`` parameters."""

    def emit(  # type: ignore[override]
        self,
        tup: Any,
        tup_id: Any = None,
        stream: str | None = "default",
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        self.emits.append((tup, tup_id, stream or "default", direct_task, need_task_ids))
        return [7] if need_task_ids else None


WEIGHTS = {"dog": 10, "cat": 1, "zebra": 1, "elephant": 1}
"""The quickstart WordCountBolt adds 10 for "dog", 1 for any other word."""
CYCLE = ("dog", "cat", "zebra", "elephant")
"""The quickstart WordSpout's words, in emit order."""
COUNTED = re.compile(r"counted \[([\d,]+)\] words \[pid=(\d+)\]")


def logged_totals(logs: Mapping[str, str]) -> dict[str, list[int]]:
    """``{log name: totals}`` of the quickstart WordCountBolt's "counted [N] words" lines."""
    totals: dict[str, list[int]] = {}
    for log_name, text in logs.items():
        found = COUNTED.findall(text)
        pids = {pid for _, pid in found}
        assert len(pids) <= 1, f"{log_name}: the bolt restarted (pids {sorted(pids)})"
        if found:
            totals[log_name] = [int(total.replace(",", "")) for total, _ in found]
    return totals


def reachable(words: frozenset[str], limit: int) -> set[int]:
    """Every running total a WordCountBolt task reaches when the fields grouping sends it
    exactly ``words`` of the spout's cycle."""
    sequence = [w for w in CYCLE if w in words]
    totals: set[int] = set()
    total = 0
    while sequence and total <= limit:
        for word in sequence:
            total += WEIGHTS[word]
            totals.add(total)
    return totals


def counts_are_consistent(totals: Mapping[str, list[int]], tasks: int) -> bool:
    """Whether some split of the four words over ``tasks`` tasks (a fields grouping sends each
    word to one task) explains every task's log exactly: its "counted [N]" lines are, in
    order and each once, the multiples of 1000 its running total passes through."""
    logs = list(totals.values())
    for assignment in range(tasks ** len(CYCLE)):
        owners = [(assignment // tasks**i) % tasks for i in range(len(CYCLE))]
        sets = [
            frozenset(w for w, o in zip(CYCLE, owners, strict=True) if o == t) for t in range(tasks)
        ]
        for order in itertools.permutations(range(tasks), len(logs)):
            if all(_explains(sets[t], log) for log, t in zip(logs, order, strict=True)):
                return True
    return False


def _explains(words: frozenset[str], log: list[int]) -> bool:
    passed = reachable(words, log[-1])
    return log == [m for m in range(1000, log[-1] + 1, 1000) if m in passed]
