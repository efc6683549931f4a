"""The running target of the HTTP attack tests: a one-container topology on ``local`` whose bolt
logs `MARKER`, with ``heron tracker`` and ``heron ui`` over it (real processes, ended by pid
when the block leaves, their logs printed when a test of the module failed)."""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "tracker"))  # the tracker tests' helpers
sys.path.insert(0, str(Path(__file__).parents[1] / "ui"))
from tracker_components import MARKER, NumberSpout, ReportingBolt
from tracker_support import HERE as TRACKER_TESTS
from tracker_support import TrackerProcess, running_tracker
from ui_support import UIProcess, running_ui

from heron_core.api import Grouping, TopologyBuilder
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import isolated_home, wait_until

__all__ = ["Tracked", "tracked_topology"]


@dataclass
class Tracked:
    """A running topology, the tracker and the UI over it."""

    home: Path
    configs: Path
    """The cluster config directory the tracker and the UI read."""
    run: TopologyRun
    tracker: TrackerProcess
    ui: UIProcess
    ids: dict[str, str]
    """The topology's ``cluster``, ``environ`` and ``topology`` query parameters."""

    def bolt_log(self) -> tuple[str, int]:
        """Wait until the bolt's log, read through the tracker, holds `MARKER`; return the
        bolt's instance id and container."""
        found: dict[str, Any] = {}

        def logged() -> bool:
            plan = self.tracker.get("/topologies/physicalplan", **self.ids)
            instances = plan.json().get("instances") if plan.status_code == 200 else None
            if not instances:
                return False
            iid = next(i for i in instances if "report" in i)
            log = self.tracker.get(instances[iid]["logfile"])
            found.update(iid=iid, container=instances[iid]["container"])
            return log.status_code == 200 and MARKER in log.json()["data"]

        wait_until(logged, "the bolt's log through the tracker", timeout=180)
        return str(found["iid"]), int(found["container"])


@contextlib.contextmanager
def tracked_topology(
    root: Path, name: str, failed: Callable[[], bool], ui_args: Sequence[str] = ()
) -> Iterator[Tracked]:
    """Run topology ``name`` (a spout and a logging bolt, one container) under a heron home in
    ``root``, and ``heron tracker`` and ``heron ui`` (with ``ui_args``) over it, until the block
    leaves; ``failed()`` says whether to print the daemons' logs then."""
    configs = root / "clusters"
    configs.mkdir()
    (configs / "local.yaml").write_text(
        yaml.safe_dump({"heron.class.scheduler": "local", "heron.class.state.manager": "localfs"})
    )
    code = root / "code"
    code.mkdir()
    shutil.copy(TRACKER_TESTS / "tracker_components.py", code)
    builder = TopologyBuilder(name)
    numbers = builder.add_spout("numbers", NumberSpout, par=1)
    builder.add_bolt("report", ReportingBolt, par=1, inputs={numbers: Grouping.SHUFFLE})
    with isolated_home(root, failed) as home, running_tracker(configs, home, failed) as tracker:
        run = TopologyRun(
            builder.build(), heron_home=home, code_root=code, containers=1, cluster="local"
        )
        with run, running_ui(tracker.url, configs, home, failed, list(ui_args)) as ui:
            ids = {"cluster": "local", "environ": "default", "topology": name}
            yield Tracked(home, configs, run, tracker, ui, ids)
