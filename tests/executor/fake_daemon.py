"""A stand-in for every heron daemon in process tests (not a test module).

Run as ``python fake_daemon.py <module> <flags...>`` (the executor's and the scheduler's
``--command-prefix`` seam puts this script in place of ``python -m``). It derives its process
name from the module and flags ("tmanager", "stmgr-1", "metricsmgr-1", "container_1_word_2",
"executor-0"),
appends ``start <pid>`` to ``W/fake/<name>.events`` and then behaves as ``W/fake/behaviour.json``
says for its name (default "run"):

* "run": wait; exit 0 on SIGTERM (appending ``stop <pid>``);
* "crash": exit 3 at once;
* "crash_once": exit 3 on the first start, then "run";
* "raise": raise ValueError naming the start at once (a traceback in its log);
* "ignore_term": ignore SIGTERM (only SIGKILL ends it).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _name(module: str, argv: list[str]) -> str:
    daemon = module.rsplit(".", 1)[-1]
    if daemon == "tmanager":
        return "tmanager"
    if daemon in ("stmgr", "metricsmgr", "executor"):
        return f"{daemon}-{_flag(argv, '--container')}"
    if daemon == "instance":
        container, component, task = (
            _flag(argv, f) for f in ("--container", "--component", "--task-id")
        )
        return f"container_{container}_{component}_{task}"
    raise SystemExit(f"fake_daemon: unknown module {module!r}")


def main() -> int:
    module, argv = sys.argv[1], sys.argv[2:]
    name = _name(module, argv)
    fake = Path(_flag(argv, "--working-dir")) / "fake"
    fake.mkdir(parents=True, exist_ok=True)
    events = fake / f"{name}.events"
    behaviours = fake / "behaviour.json"
    behaviour = (
        json.loads(behaviours.read_text()).get(name, "run") if behaviours.exists() else "run"
    )

    def on_term(signum: int, frame: object) -> None:
        with events.open("a") as out:
            out.write(f"stop {os.getpid()}\n")
        sys.exit(0)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if behaviour == "ignore_term" else on_term)
    with events.open("a") as out:
        out.write(f"start {os.getpid()}\n")
    starts = events.read_text().count("start ")
    if behaviour == "crash" or (behaviour == "crash_once" and starts == 1):
        print(f"{name}: crashing on purpose", file=sys.stderr, flush=True)
        return 3
    if behaviour == "raise":
        raise ValueError(f"{name}: raising on purpose at start {starts}")
    print(f"{name}: running as pid {os.getpid()}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
