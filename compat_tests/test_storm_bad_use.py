"""Bad use gets a clear error naming the component (one container: where the task runs
does not change the error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compat_components import OpenFailsSpout, UndeclaredStreamBolt, WrongArityBolt
from compat_support import complete

from heron_core.errors import UserCodeError
from storm_compat import StormTopology
from storm_compat.testing import FixedTupleSpout
from storm_compat.topology import TopologyBuilder
from storm_compat.tuple import Fields

pytestmark = pytest.mark.processes


def with_bolt(bolt: UndeclaredStreamBolt) -> StormTopology:
    builder = TopologyBuilder()
    builder.setSpout("src", FixedTupleSpout([["a"]], Fields("word")))
    builder.setBolt("careless", bolt).shuffleGrouping("src")
    return builder.createTopology()


def test_emitting_on_an_undeclared_stream(tmp_path: Path) -> None:
    with pytest.raises(
        UserCodeError,
        match=r"(?s)task \d+ of component 'careless' died.*component 'careless', task \d+: "
        r"emitted on stream 'nope', which the component does not declare",
    ):
        complete(tmp_path, lambda _: with_bolt(UndeclaredStreamBolt()), 1)


def test_values_of_the_wrong_arity(tmp_path: Path) -> None:
    with pytest.raises(
        UserCodeError,
        match=r"(?s)component 'careless', task \d+: Tuple created with wrong number of fields\. "
        r"Expected 1 fields but got 2 fields \(stream 'default' declares \['word'\]",
    ):
        complete(tmp_path, lambda _: with_bolt(WrongArityBolt()), 1)


def test_a_spout_raising_in_open(tmp_path: Path) -> None:
    builder = TopologyBuilder()
    builder.setSpout("queue", OpenFailsSpout([["a"]], Fields("word")))
    with pytest.raises(
        UserCodeError,
        match=r"(?s)component 'queue', task \d+: OpenFailsSpout.open\(\) raised "
        r"ConnectionError\('cannot reach the queue'\)",
    ):
        complete(tmp_path, lambda _: builder.createTopology(), 1)
