"""``Testing.completeTopology``: run a topology on a `LocalCluster` until every spout tuple's
tree completes, capturing every tuple emitted on every stream.

Spouts are ``FixedTupleSpout``s (or are replaced by them through ``MockedSources``); each
reports its acks and fails to a file in a directory of this process, and a capture bolt
subscribed to every stream pickles what it receives to a file in the same directory.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from heron_core.api import DEFAULT_STREAM, Grouping
from heron_core.errors import TopologyValidationError
from storm_compat._local import LocalCluster, LocalTopology
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.testing._components import FixedTuple, FixedTupleSpout
from storm_compat.topology import IRichSpout, OutputFieldsDeclarer, StormTopology
from storm_compat.topology._builder import DeclaredComponent, DeclaredInput
from storm_compat.topology.base import BaseRichBolt
from storm_compat.tuple import Tuple

__all__ = ["CompleteTopologyParam", "MockedSources", "Testing"]

STARTUP_TIMEOUT_S = 120.0
"""How long ``completeTopology`` waits for the topology's processes to come up."""
_POLL_S = 0.1


def _default_timeout_ms() -> int:
    """Storm's ``Testing.TEST_TIMEOUT_MS``: ``$STORM_TEST_TIMEOUT_MS``, else 10 s."""
    try:
        return int(os.environ["STORM_TEST_TIMEOUT_MS"])
    except (KeyError, ValueError):
        return 10_000


class MockedSources:
    """Tuples that replace spouts' output in ``completeTopology``.

    >>> sources = MockedSources()
    >>> sources.addMockData("words", ["nathan"], ["mike"])
    >>> sources.addMockData("words", "other", ["golda"])
    >>> [(t.stream, t.values) for t in sources.getData()["words"]]
    [('default', ['nathan']), ('default', ['mike']), ('other', ['golda'])]
    """

    def __init__(self, data: Mapping[str, Sequence[Sequence[Any]]] | None = None) -> None:
        self._data: dict[str, list[FixedTuple]] = {}
        for spout_id, tuples in (data or {}).items():
            self.addMockData(spout_id, *tuples)

    def addMockData(self, spoutId: str, *args: Any) -> None:
        """``addMockData(spoutId, [streamId,] *values)``: tuples for spout ``spoutId``."""
        stream = DEFAULT_STREAM
        if args and isinstance(args[0], str):
            stream, args = args[0], args[1:]
        self._data.setdefault(spoutId, []).extend(FixedTuple(list(v), stream) for v in args)

    def getData(self) -> dict[str, list[FixedTuple]]:
        """The tuples of each mocked spout."""
        return {spout: list(tuples) for spout, tuples in self._data.items()}


@dataclass
class CompleteTopologyParam:
    """How ``completeTopology`` runs: mocked sources, topology config, time limit, name.

    Attributes:
        mockedSources: tuples replacing spouts' output, or None.
        stormConf: the topology config, or None.
        timeoutMs: how long the spout tuples may take to complete once the topology is up
            (default: ``$STORM_TEST_TIMEOUT_MS``, else 10 000).
        topologyName: default ``topologytest-<uuid>``.
    """

    mockedSources: MockedSources | None = None
    stormConf: Mapping[str, Any] | None = None
    timeoutMs: int | None = None
    topologyName: str | None = None

    def setMockedSources(self, mockedSources: MockedSources) -> None:
        self.mockedSources = mockedSources

    def getMockedSources(self) -> MockedSources | None:
        return self.mockedSources

    def setStormConf(self, stormConf: Mapping[str, Any]) -> None:
        self.stormConf = stormConf

    def getStormConf(self) -> Mapping[str, Any] | None:
        return self.stormConf

    def setTimeoutMs(self, timeoutMs: int) -> None:
        self.timeoutMs = timeoutMs

    def getTimeoutMs(self) -> int | None:
        return self.timeoutMs

    def setTopologyName(self, topologyName: str) -> None:
        self.topologyName = topologyName

    def getTopologyName(self) -> str | None:
        return self.topologyName


class CaptureBolt(BaseRichBolt):
    """Pickles ``(component, stream, values)`` of every input to a file, then acks it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        self._collector = collector
        path = Path(self.directory) / f"capture-{context.getThisTaskId()}.pickle"
        self._file: IO[bytes] = path.open("ab")

    def execute(self, input: Tuple) -> None:
        record = (input.getSourceComponent(), input.getSourceStreamId(), input.getValues())
        pickle.dump(record, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.flush()
        self._collector.ack(input)

    def cleanup(self) -> None:
        self._file.close()

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declares nothing."""


def _prepare(
    topology: StormTopology, mocked: MockedSources | None, directory: Path
) -> tuple[StormTopology, dict[str, int]]:
    """The topology with mocked spouts, reporting spouts and the capture bolt; and the number
    of tuples each spout emits."""
    data = mocked.getData() if mocked is not None else {}
    spout_ids = [c.id for c in topology.components if isinstance(c.component, IRichSpout)]
    for spout_id in data:
        if spout_id not in spout_ids:
            raise TopologyValidationError(
                "<completeTopology>",
                spout_id,
                f"mocked data for a component that is not a spout; spouts: {spout_ids}",
            )
    totals: dict[str, int] = {}
    for comp in topology.components:
        if comp.id in data:
            spout = FixedTupleSpout(data[comp.id])
        elif isinstance(comp.component, FixedTupleSpout):
            spout = copy.copy(comp.component)
        elif isinstance(comp.component, IRichSpout):
            raise TopologyValidationError(
                "<completeTopology>",
                comp.id,
                "cannot complete a topology unless every spout is a FixedTupleSpout or mocked; "
                f"this one is a {type(comp.component).__qualname__}",
            )
        else:
            continue
        spout._report_dir = str(directory)
        totals[comp.id] = len(spout.getSourceTuples())
        topology = topology.with_component(dataclasses.replace(comp, component=spout))
    inputs = tuple(
        DeclaredInput(c.id, s.stream_id, Grouping.DIRECT if s.direct else Grouping.GLOBAL)
        for c in topology.components
        for s in c.streams
    )
    if inputs:
        capture = DeclaredComponent(
            f"capture-{uuid.uuid4().hex[:12]}", CaptureBolt(str(directory)), 1, {}, (), inputs
        )
        topology = topology.with_component(capture)
    return topology, totals


def _completed(directory: Path, spout_id: str) -> int:
    return sum(len(path.read_text().splitlines()) for path in directory.glob(f"done-{spout_id}-*"))


def _read_captures(directory: Path) -> dict[str, list[FixedTuple]]:
    results: dict[str, list[FixedTuple]] = {}
    for path in sorted(directory.glob("capture-*.pickle")):
        with path.open("rb") as file:
            while True:
                try:
                    component, stream, values = pickle.load(file)
                except EOFError:
                    break
                results.setdefault(component, []).append(FixedTuple(values, stream))
    return results


def _wait(
    running: LocalTopology,
    condition: Callable[[], bool],
    timeout_s: float,
    describe: Callable[[], str],
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        running.check_instances()
        if time.monotonic() > deadline:
            running.dump_stacks()  # where each process is, in its log
            raise AssertionError(
                f"topology {running.name!r}: timed out after {timeout_s:g} s {describe()}; "
                "each process printed its threads' stacks to its log"
            )
        time.sleep(_POLL_S)


class Testing:
    """Run topologies to completion and read what they emitted (Storm's ``Testing``)."""

    @staticmethod
    def completeTopology(
        cluster: LocalCluster,
        topology: StormTopology,
        param: CompleteTopologyParam | None = None,
    ) -> dict[str, list[FixedTuple]]:
        """Run ``topology`` on ``cluster`` until every spout tuple is acked or failed, kill
        it, and return every tuple each component emitted (``readTuples`` reads them).

        Every spout must be a ``FixedTupleSpout`` or be mocked by ``param.mockedSources`` (a
        mocked spout keeps its component id and declared outputs). A bolt subscribed to every
        stream captures the tuples; tuples emitted unanchored may be missed, as in Storm.

        Raises:
            TopologyValidationError: a spout is neither a FixedTupleSpout nor mocked, or mocked
                data names no spout.
            UserCodeError: a task died (user code raised); the message has the end of its log.
            AssertionError: the topology did not come up within `STARTUP_TIMEOUT_S` seconds,
                or its spout tuples did not complete within the timeout.
        """
        param = param or CompleteTopologyParam()
        name = param.getTopologyName() or f"topologytest-{uuid.uuid4().hex}"
        timeout_ms = param.getTimeoutMs() or _default_timeout_ms()
        directory = Path(tempfile.mkdtemp(prefix="storm-complete-"))
        try:
            prepared, totals = _prepare(topology, param.getMockedSources(), directory)
            cluster.submitTopology(name, param.getStormConf(), prepared)
            running = cluster.topology(name)
            try:
                _wait(running, running.is_running, STARTUP_TIMEOUT_S, lambda: "coming up")
                _wait(
                    running,
                    lambda: all(_completed(directory, s) >= n for s, n in totals.items()),
                    timeout_ms / 1000,
                    lambda: (
                        "waiting for every spout tuple to be acked or failed; done: "
                        + ", ".join(
                            f"{s} {_completed(directory, s)}/{n}" for s, n in totals.items()
                        )
                    ),
                )
            finally:
                cluster.killTopology(name)
            return _read_captures(directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    @staticmethod
    def readTuples(
        results: Mapping[str, Sequence[FixedTuple]],
        componentId: str,
        streamId: str = DEFAULT_STREAM,
    ) -> list[list[Any]]:
        """The values of every tuple ``componentId`` emitted on ``streamId``.

        >>> Testing.readTuples({"words": [FixedTuple(["a"]), FixedTuple(["b"], "x")]}, "words")
        [['a']]
        """
        return [list(t.values) for t in results.get(componentId, ()) if t.stream == streamId]

    @staticmethod
    def multiseteq(a: Sequence[Any], b: Sequence[Any]) -> bool:
        """Whether ``a`` and ``b`` hold the same items, in any order.

        >>> Testing.multiseteq([["a"], ["b"], ["a"]], [["b"], ["a"], ["a"]])
        True
        """
        rest = list(b)
        for item in a:
            if item not in rest:
                return False
            rest.remove(item)
        return not rest
