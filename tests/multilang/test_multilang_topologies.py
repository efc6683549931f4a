"""Multilang components on the real process model: pystorm's Bolt, BatchingBolt, Spout and
ReliableSpout (with replays), a component printing to stdout, msgpack, and instances
restarted when their subprocess crashes or stops answering."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from multilang_components import AckingRecorder

from heron_core.api import Grouping, ShellComponent, TopologyBuilder, shell_component
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import read_records

pytestmark = pytest.mark.processes

PY = sys.executable
SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
]
WORDS = Counter(word for sentence in SENTENCES for word in sentence.split())


def pystorm(name: str, outputs: list[str], serializer: str = "json") -> ShellComponent:
    return shell_component([PY, "pystorm_components.py", name, serializer], outputs, serializer)


def logged(run: TopologyRun, pattern: str) -> list[str]:
    return [m for text in run.logs().values() for m in re.findall(pattern, text)]


def test_pystorm_components_driven_by_the_multilang_host(code: Path, home: Path) -> None:
    out = home.parent / "out"
    b = TopologyBuilder("pystorm")
    sentences = b.add_spout("sentences", pystorm("SentenceSpout", ["index", "sentence"]))
    split = b.add_bolt("split", pystorm("FlakySplitBolt", ["word"]), inputs=[sentences])
    count = b.add_bolt(
        "count",
        pystorm("CountBolt", ["word", "count"]),
        inputs={split: Grouping.fields("word")},
        config={"topology.tick.tuple.freq.secs": 1},
    )
    numbers = b.add_spout("numbers", pystorm("NumberSpout", ["n"]))
    echo = b.add_bolt("echo", pystorm("EchoBolt", ["n", "square"], "msgpack"), inputs=[numbers])
    b.add_bolt("rec", AckingRecorder(str(out)), inputs=[count, echo])
    b.set_config({"sentences": SENTENCES, "numbers": 20})
    with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
        run.wait_until(
            lambda: len(set(logged(run, r"acked sentence (\d+)"))) == len(SENTENCES),
            "every sentence acked (after one replay each)",
        )

        def counted() -> Counter[str]:
            totals: Counter[str] = Counter()
            for r in read_records(out):
                if r["component"] == "count":
                    totals[r["values"][0]] += r["values"][1]
            return totals

        run.wait_until(lambda: counted() == WORDS, "BatchingBolt counts flushed by ticks")
        run.wait_until(
            lambda: sum(r["component"] == "echo" for r in read_records(out)) == 20, "20 echoes"
        )
        failed_once = logged(run, r"failing sentence (\d+) once")
        printed = logged(run, r"stdout of pid \d+: processing sentence (\d+)")
    echoes = sorted(r["values"] for r in read_records(out) if r["component"] == "echo")
    assert echoes == [[n, n * n] for n in range(20)]  # pystorm Spout, Bolt, over msgpack
    assert sorted(failed_once) == [str(i) for i in range(len(SENTENCES))]  # ReliableSpout replayed
    assert Counter(printed) == Counter({str(i): 2 for i in range(len(SENTENCES))})


def test_instances_restart_when_the_subprocess_crashes_or_stops_answering(
    code: Path, home: Path
) -> None:
    out = home.parent / "out"
    b = TopologyBuilder("flaky")
    spout = b.add_spout("sentences", shell_component([PY, "sentence_spout.py"], ["sentence"]))
    crash = b.add_bolt(
        "crash", shell_component([PY, "flaky_bolt.py", "crash"], ["sentence"]), inputs=[spout]
    )
    hang = b.add_bolt(
        "hang", shell_component([PY, "flaky_bolt.py", "hang"], ["sentence"]), inputs=[crash]
    )
    b.add_bolt("rec", AckingRecorder(str(out)), inputs=[hang])
    b.set_config(
        {
            "sentences": SENTENCES,
            "topology.message.timeout.secs": 3,
            "topology.subprocess.timeout.secs": 2,
        }
    )
    with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
        run.wait_until(
            lambda: len(set(logged(run, r"acked sentence (\d+)"))) == len(SENTENCES),
            "every sentence acked despite the crash and the hang",
        )
        errors = logged(
            run, r"multilang subprocess .* \(pid \d+\) (exited with status 3|sent nothing for 2s)"
        )
        restarts = logged(
            run, r"container_1_(crash|hang)_\d+ \(pid \d+\) exited with exit status 1"
        )
    assert sorted({r["values"][0] for r in read_records(out)}) == sorted(SENTENCES)
    assert sorted(set(errors)) == ["exited with status 3", "sent nothing for 2s"]
    assert sorted(set(restarts)) == ["crash", "hang"]
