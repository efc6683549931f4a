"""Storm's ShellBolt and ShellSpout from the Storm facade: constructor forms, the collectors,
and a storm-starter style split-sentence topology on the real process model."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from multilang_components import SentenceShellSpout, SplitSentence, StormRecorder
from multilang_support import BoltRecorder, FakeContext, script

from heron_core.api import Tuple as NativeTuple
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import read_records
from storm_compat.multilang import ShellBolt, ShellSpout
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import OutputFieldsDeclarer, TopologyBuilder
from storm_compat.tuple import Fields, Tuple

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class Probe(ShellBolt):
    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        declarer.declare(Fields("a"))


def test_constructor_forms_and_settings() -> None:
    thrift_like = SimpleNamespace(execution_command="python3", script="split.py")
    for args in (("python3", "split.py"), (["python3", "split.py"],), (thrift_like,)):
        assert Probe(*args).command == ("python3", "split.py")
    bolt = Probe("python3", "split.py")
    assert bolt.setEnv({"A": "1"}) is bolt
    assert bolt.shouldChangeChildCWD() and bolt.getComponentConfiguration() is None
    bolt.changeChildCWD(False)
    assert not bolt.shouldChangeChildCWD()
    for bad in ((), (["python3", 1],), ("python3", None)):
        with pytest.raises(TypeError, match="Probe needs a command"):
            Probe(*bad)
    with pytest.raises(TypeError):
        ShellSpout("python3", "spout.py")  # type: ignore[abstract]  # declareOutputFields


@pytest.mark.processes
def test_a_shell_bolt_acks_and_anchors_through_storms_output_collector() -> None:
    kernel = BoltRecorder()
    bolt = Probe(script("probe_bolt.py"))
    bolt.prepare(
        {"topology.multilang.serializer": "json"},
        TopologyContext(FakeContext()),
        OutputCollector(kernel),
    )
    native = NativeTuple("1", "words", "default", 1, ["emit", "hi"])
    tick = NativeTuple("__tick", "__system", "__tick", -1, [1])
    try:
        bolt.execute(Tuple(native, Fields("action", "word")))
        bolt.execute(Tuple(tick, Fields("rate_secs")))
        bolt.execute(
            Tuple(
                NativeTuple("2", "words", "default", 1, ["direct", 6, "x"]), Fields("a", "b", "c")
            )
        )
    finally:
        bolt.cleanup()
    direct = NativeTuple("2", "words", "default", 1, ["direct", 6, "x"])
    assert kernel.emits == [
        (["hi"], "default", [native], None, True),
        (["x"], "direct", [direct], 6, False),
    ]
    assert kernel.acked == [native, direct]  # the tick's ack stays in the host


@pytest.mark.processes
def test_storm_facade_word_count_with_shell_spout_and_bolt(code: Path, home: Path) -> None:
    out = home.parent / "out"
    builder = TopologyBuilder()
    builder.setSpout("sentences", SentenceShellSpout())
    builder.setBolt("split", SplitSentence(), 2).shuffleGrouping("sentences")
    builder.setBolt("count", StormRecorder(str(out)), 2).fieldsGrouping("split", Fields("word"))
    config: dict[str, Any] = {"sentences": SENTENCES, "topology.workers": 1}
    plan = builder.createTopology().to_logical_plan("storm-shell", config)
    expected = Counter(word for sentence in SENTENCES for word in sentence.split())
    acked = re.compile(r"ShellLog pid \d+: acked sentence (\d+)")
    with TopologyRun(plan, heron_home=home, code_root=code) as run:

        def acks() -> set[int]:
            return {int(i) for text in run.logs().values() for i in acked.findall(text)}

        run.wait_until(lambda: len(acks()) == len(SENTENCES), "every sentence acked", 120)
        records = read_records(out)
    counted = Counter(r["values"][0] for r in records)
    assert counted == expected
    by_word = {r["values"][0]: r["task"] for r in records}  # fields grouping: one task per word
    assert all(by_word[r["values"][0]] == r["task"] for r in records)
