"""Issue 3 acceptance: topologies through the real process model (every task its own process,
stream managers routing, one topology manager)."""

from __future__ import annotations

import importlib
import itertools
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from e2e_components import (  # type: ignore[import-not-found]
    CrashOnceBolt,
    DirectSpout,
    FastSpout,
    NoStreamRelay,
    NoStreamSpout,
    NumberSpout,
    TypedSink,
    read_log,
)
from e2e_fixtures import code_fixture, home_fixture  # noqa: F401 - fixtures

from heron_core.api import Grouping, TopologyBuilder
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import FixedSpout, RecordingBolt, read_records, wait_for_records

ROOT = Path(__file__).resolve().parents[2]


def wc() -> Any:
    """The word_count topology module as sys.modules has it now (other tests load it too)."""
    if str(ROOT / "topologies") not in sys.path:
        sys.path.insert(0, str(ROOT / "topologies"))
    return importlib.import_module("word_count")


pytestmark = pytest.mark.processes


@pytest.mark.parametrize("containers", [1, 3])
def test_word_count_gives_exact_counts(
    home: Path, tmp_path: Path, code: Path, containers: int
) -> None:
    sentences = wc().sentences(300, seed=5)
    expected = Counter(w for s in sentences for w in s.split())
    out = tmp_path / "records"
    b = TopologyBuilder("wordcount")
    spout = b.add_spout("sentence", FixedSpout(["sentence"], [[s] for s in sentences]), par=2)
    split = b.add_bolt("split", wc().SplitBolt, par=2, inputs={spout: Grouping.SHUFFLE})
    count = b.add_bolt("count", wc().CountBolt, par=3, inputs={split: Grouping.fields("word")})
    b.add_bolt("sink", RecordingBolt(out), par=2, inputs={count: Grouping.fields("word")})
    with TopologyRun(b.build(), heron_home=home, code_root=code, containers=containers) as run:
        assert len(run.deployment.packing_plan.containers) == containers
        records = wait_for_records(out, sum(expected.values()))
        final: dict[str, int] = defaultdict(int)
        for r in records:
            word, n = r["values"]
            final[word] = max(final[word], n)
        assert final == expected
        # each word was counted by exactly one count task
        tasks_per_word = defaultdict(set)
        for r in records:
            tasks_per_word[r["values"][0]].add(r["source_task"])
        assert all(len(t) == 1 for t in tasks_per_word.values())


def test_each_grouping_keeps_its_contract(home: Path, tmp_path: Path, code: Path) -> None:
    rows = [[f"k{i % 17}", i] for i in range(600)]
    out = tmp_path / "records"
    b = TopologyBuilder("groupings")
    spout = b.add_spout("src", FixedSpout(["key", "n"], rows), par=2)
    for name, grouping in [
        ("fields", Grouping.fields("key")),
        ("all", Grouping.ALL),
        ("global", Grouping.GLOBAL),
        ("shuffle", Grouping.SHUFFLE),
        ("local", Grouping.LOCAL_OR_SHUFFLE),
    ]:
        b.add_bolt(name, RecordingBolt(out / name), par=3, inputs={spout: grouping})
    direct = b.add_spout("directsrc", DirectSpout(90, "direct"), par=1)
    b.add_bolt("direct", RecordingBolt(out / "direct"), par=3, inputs={direct: Grouping.DIRECT})
    with TopologyRun(b.build(), heron_home=home, code_root=code, containers=2) as run:
        container_of = {
            i.task_id: c.id for c in run.deployment.packing_plan.containers for i in c.instances
        }
        tasks_of = defaultdict(list)
        for c in run.deployment.packing_plan.containers:
            for i in c.instances:
                tasks_of[i.component_name].append(i.task_id)
        n = len(rows)
        got = {
            "fields": wait_for_records(out / "fields", n),
            "all": wait_for_records(out / "all", 3 * n),
            "global": wait_for_records(out / "global", n),
            "shuffle": wait_for_records(out / "shuffle", n),
            "local": wait_for_records(out / "local", n),
            "direct": wait_for_records(out / "direct", 90),
        }
        by_key = defaultdict(set)
        for r in got["fields"]:
            by_key[r["values"][0]].add(r["task"])
        assert all(len(tasks) == 1 for tasks in by_key.values())
        per_task_all = Counter(r["task"] for r in got["all"])
        assert per_task_all == {t: n for t in tasks_of["all"]}
        assert {r["task"] for r in got["global"]} == {min(tasks_of["global"])}
        shares = Counter(r["task"] for r in got["shuffle"])
        assert set(shares) == set(tasks_of["shuffle"])
        assert max(shares.values()) - min(shares.values()) <= 2  # round robin per spout task
        for r in got["local"]:
            local = [
                t for t in tasks_of["local"] if container_of[t] == container_of[r["source_task"]]
            ]
            assert r["task"] in local if local else r["task"] in tasks_of["local"]
        assert all(r["task"] == r["values"][1] for r in got["direct"])
        assert len(got["direct"]) == 90 and len({r["task"] for r in got["direct"]}) == 3
        assert len(read_records(out / "all")) == 3 * n  # nothing duplicated


def test_a_bolt_gets_its_inputs_as_its_tuple_type(home: Path, tmp_path: Path, code: Path) -> None:
    """Inputs in trees (a reliable spout's) and outside (an unreliable spout's, relayed) are
    built as the bolt's ``tuple_type``; the instance froze its start-up objects out of the
    garbage collector and set the configured threshold. (The unreliable words are emitted with
    ``stream=None``, pystorm's default stream, by the spout and by the relay.)"""
    out = tmp_path / "typed"
    b = TopologyBuilder("typed")
    numbers = b.add_spout("numbers", NumberSpout(40, str(out)), par=1)
    words = b.add_spout("words", NoStreamSpout(40), par=1)
    relay = b.add_bolt("relay", NoStreamRelay, par=1, inputs={words: Grouping.SHUFFLE})
    b.add_bolt(
        "sink",
        TypedSink(str(out)),
        par=2,
        inputs={numbers: Grouping.SHUFFLE, relay: Grouping.SHUFFLE},
    )
    config = {"topology.reliability.mode": "ATLEAST_ONCE", "heron.instance.gc.threshold": 4321}
    with TopologyRun(b.build(), heron_home=home, code_root=code, config=config) as run:
        run.wait_until(lambda: len(read_log(out, "typed")) >= 80, "80 inputs logged", 120)
        records = read_log(out, "typed")
    assert sorted(r["first"] for r in records if isinstance(r["first"], int)) == list(range(40))
    assert sorted(r["first"] for r in records if isinstance(r["first"], str)) == sorted(
        f"w{i}" for i in range(40)
    )
    assert {r["kind"] for r in records} == {"FirstTuple"}
    assert all(r["first"] == r["values"][0] for r in records)
    assert {r["threshold"] for r in records} == {4321}
    assert all(r["frozen"] > 0 for r in records)


def test_tick_tuples_arrive_at_about_the_configured_rate(
    home: Path, tmp_path: Path, code: Path
) -> None:
    out = tmp_path / "ticks"
    b = TopologyBuilder("ticks")
    spout = b.add_spout("src", FixedSpout(["x"], [[1]]), par=1)
    b.add_bolt(
        "ticker",
        RecordingBolt(out),
        par=1,
        inputs={spout: Grouping.SHUFFLE},
        config={"topology.tick.tuple.freq.secs": 0.5},
    )
    with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
        ticks = wait_for_records(out, 8, key="tick")
        times = sorted(r["tick"] for r in ticks)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert 0.3 < statistics.median(gaps) < 1.0, gaps
        assert run.counter("ticker", "__execute-count") == 1


def test_a_killed_instance_is_restarted_and_the_topology_keeps_flowing(
    home: Path, code: Path
) -> None:
    with TopologyRun(wc().WordCount.build(), heron_home=home, code_root=code) as run:
        run.wait_until(lambda: run.counter("count", "__execute-count") > 20_000, "words counted")
        old_pid = run.kill_instance("split", 0)

        def restarted() -> bool:
            try:
                return run.instance_process("split", 0).pid != old_pid
            except Exception:
                return False

        run.wait_until(restarted, "the executor restarting split[0]")
        assert "exited" in run.logs()["executor-1"] and str(old_pid) in run.logs()["executor-1"]

        def split0_executed() -> int:
            return sum(
                int(d.value)
                for m in run.metrics()
                if m.publisher.component_name == "split" and m.publisher.instance_index == 0
                for d in m.metrics
                if d.name.startswith("__execute-count")
            )

        run.wait_until(lambda: split0_executed() > 1000, "the restarted split[0] processing")


def test_an_exception_in_user_code_is_logged_and_the_instance_restarted(
    home: Path, tmp_path: Path, code: Path
) -> None:
    out = tmp_path / "records"
    b = TopologyBuilder("crashing")
    spout = b.add_spout("src", FastSpout(10**9), par=1)
    crash = b.add_bolt(
        "crasher", CrashOnceBolt(str(tmp_path / "marker")), par=1, inputs={spout: Grouping.SHUFFLE}
    )
    b.add_bolt("sink", RecordingBolt(out), par=1, inputs={crash: Grouping.SHUFFLE})
    with TopologyRun(b.build(), heron_home=home, code_root=code) as run:
        wait_for_records(out, 1)  # flowing again after the restart
        log = run.logs()["container_1_crasher_1"]
        assert "topology 'crashing', component 'crasher', task 1: user code raised" in log
        assert "ValueError: boom" in log and "in process" in log  # the user's traceback
        assert "container_1_crasher_1" in run.logs()["executor-1"]
        assert "exit status 1" in run.logs()["executor-1"]


@pytest.mark.zookeeper
def test_word_count_on_the_localzk_cluster_finds_everything_through_zookeeper(
    home: Path, tmp_path: Path, code: Path, zk_config: dict[str, Any]
) -> None:
    sentences = wc().sentences(100, seed=9)
    expected = Counter(w for s in sentences for w in s.split())
    out = tmp_path / "records"
    b = TopologyBuilder("wordcount-zk")
    spout = b.add_spout("sentence", FixedSpout(["sentence"], [[s] for s in sentences]), par=1)
    split = b.add_bolt("split", wc().SplitBolt, par=2, inputs={spout: Grouping.SHUFFLE})
    count = b.add_bolt("count", wc().CountBolt, par=2, inputs={split: Grouping.fields("word")})
    b.add_bolt("sink", RecordingBolt(out), par=1, inputs={count: Grouping.fields("word")})
    config = {k: v for k, v in zk_config.items() if k.startswith("heron.statemgr.")}
    with TopologyRun(
        b.build(), heron_home=home, code_root=code, containers=2, config=config, cluster="localzk"
    ) as run:
        state = run.deployment.config
        assert state["heron.class.state.manager"] == "zookeeper"
        records = wait_for_records(out, sum(expected.values()))
        final: dict[str, int] = defaultdict(int)
        for r in records:
            final[r["values"][0]] = max(final[r["values"][0]], r["values"][1])
        assert final == expected
        tmanager_log = run.logs()["tmanager"]
        assert "physical plan built" in tmanager_log
