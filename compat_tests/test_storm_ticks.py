"""Tick tuples: delivered to execute at the configured frequency, from __system/__tick."""

from __future__ import annotations

import pytest
from compat_components import Ticker
from compat_support import Run, complete, workers_fixture  # noqa: F401 - a fixture

from storm_compat import Config, StormTopology
from storm_compat.testing import FixedTupleSpout, MockedSources
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes


class TickingTicker(Ticker):
    """Asks for a tick every second in its component config."""

    def getComponentConfiguration(self) -> dict[str, object]:
        return {Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 1}


def topology(events: str) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", FixedTupleSpout([], Fields("word")))
    builder.setBolt("by_component", TickingTicker(2), 2).shuffleGrouping("src")
    builder.setBolt("by_declarer", Ticker(2)).shuffleGrouping("src").addConfiguration(
        Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS, 1
    )
    builder.setBolt("without", Ticker(0)).shuffleGrouping("src")
    return builder.createTopology()


@pytest.fixture(scope="module")
def run(workers: int, tmp_path_factory: pytest.TempPathFactory) -> Run:
    mocked = MockedSources({"src": [["a"], ["b"], ["c"]]})
    return complete(tmp_path_factory.mktemp("ticks"), topology, workers, mocked=mocked)


@pytest.mark.parametrize("bolt", ["by_component", "by_declarer"])
def test_ticks_reach_execute_from_the_system_tick_stream(run: Run, bolt: str) -> None:
    emitted = run.tuples(bolt)
    assert sorted(word for word, _, _ in emitted) == ["a", "b", "c"]
    assert all(ticks >= 2 for _, ticks, _ in emitted)
    assert all(
        tick
        == {
            "component": "__system",
            "stream": "__tick",
            "task": -1,
            "fields": ["rate_secs"],
            "rate_secs": 1,
        }
        for _, _, tick in emitted
    )


def test_a_bolt_without_a_tick_frequency_gets_no_ticks(run: Run) -> None:
    assert sorted(run.tuples("without")) == [["a", 0, {}], ["b", 0, {}], ["c", 0, {}]]
