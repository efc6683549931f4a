"""At-least-once bookkeeping inside an instance.

Tuple trees are tracked by the stream manager of each spout task's container (XOR of random
64-bit edge ids, as Storm's acker does). The instance's part:

- a spout keeps its in-flight message ids (:class:`InFlight`), sends the XOR of a new tree's first
  edges (*init*), and fails what does not complete within the message timeout;
- a bolt sends, when it acks an input, the input's edge XOR its children's edges for each tree
  the input belongs to (*ack*), or *fail* for each tree.

:class:`AckSender` batches those entries per spout task, like tuples are batched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any

from heron_core.instance.stmgr_client import StMgrClient
from heron_core.network import ack_frames
from heron_core.proto import tuple_pb2

Id = Any
"""A tree's 64-bit root key or an edge value (XORs of them too): an int, typed Any. Compiled,
mypyc holds an ``int`` as a tagged C integer where it fits in 62 bits, so each id would be
converted from its object and boxed again (a new object) wherever it is stored; as Any it stays
the object it is (random ids are mostly above 2**62 anyway)."""


class _Entries:
    __slots__ = ("acks", "fail_keys", "init_keys", "init_values", "reset_keys")

    def __init__(self) -> None:
        self.init_keys: list[Id] = []
        self.init_values: list[Id] = []
        self.acks: dict[Id, Id] = {}  # root key -> XOR of the values acked since the flush
        self.fail_keys: list[Id] = []
        self.reset_keys: list[Id] = []


class AckSender:
    """Acking entries per spout task, sent as one ``AckBatch`` per task on :meth:`flush`.

    Acks for the same tree between two flushes are XORed into one entry (XOR is associative),
    so the tracker sees about one entry per tree and flush instead of one per tuple.
    """

    def __init__(self, client: StMgrClient) -> None:
        self._client = client
        self._pending: dict[int, _Entries] = {}  # kept for the sender's life, emptied by flush

    def _entries(self, spout_task: int) -> _Entries:
        entries = self._pending.get(spout_task)
        if entries is None:
            entries = self._pending[spout_task] = _Entries()
        return entries

    def init(self, spout_task: int, key: Id, value: Id) -> None:
        entries = self._entries(spout_task)
        entries.init_keys.append(key)
        entries.init_values.append(value)

    def acks_of(self, spout_task: int) -> dict[Id, Id]:
        """The live root key -> XOR map of ``spout_task``'s acks (the same dict for the
        sender's life, emptied by :meth:`flush`), which `heron_core.instance._anchoring.Acker`
        XORs each ack into."""
        return self._entries(spout_task).acks

    def fail(self, spout_task: int, key: Id) -> None:
        self._entries(spout_task).fail_keys.append(key)

    def reset(self, spout_task: int, key: Id) -> None:
        self._entries(spout_task).reset_keys.append(key)

    def flush(self) -> None:
        for spout_task, e in self._pending.items():
            if not (e.init_keys or e.acks or e.fail_keys or e.reset_keys):
                continue
            batch = tuple_pb2.AckBatch(
                spout_task=spout_task,
                init_keys=e.init_keys,
                init_values=e.init_values,
                ack_keys=list(e.acks),
                ack_values=list(e.acks.values()),
                fail_keys=e.fail_keys,
                reset_keys=e.reset_keys,
            )
            self._client.send(ack_frames(spout_task, batch.SerializeToString()))
            e.init_keys.clear()
            e.init_values.clear()
            e.acks.clear()
            e.fail_keys.clear()
            e.reset_keys.clear()


class InFlight:
    """A spout task's trees in flight: root key -> (message id, stream, start time), oldest
    first.

    Contract: every root leaves exactly once, by :meth:`complete`, :meth:`failed` or
    :meth:`expired`; later outcomes for a root that already left return None and are ignored.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # insertion-ordered: oldest first (reset re-inserts at the end)
        self._trees: dict[Id, tuple[Any, str, float]] = {}

    def __len__(self) -> int:
        return len(self._trees)

    def add(self, root: Id, msg_id: Any, stream: str) -> None:
        self._trees[root] = (msg_id, stream, self._clock())

    def complete(self, roots: Iterable[Id]) -> list[tuple[Any, str, float]]:
        """(message id, stream, start time) of each of ``roots`` that was in flight."""
        pop = self._trees.pop
        return [entry for entry in map(pop, roots, repeat(None)) if entry is not None]

    def failed(self, root: Id) -> tuple[Any, str] | None:
        """The message id and its stream, if ``root`` was in flight."""
        entry = self._trees.pop(root, None)
        return None if entry is None else (entry[0], entry[1])

    def reset(self, root: Id) -> None:
        """Restart ``root``'s timeout (Storm's resetTimeout)."""
        entry = self._trees.pop(root, None)
        if entry is not None:
            self._trees[root] = (entry[0], entry[1], self._clock())

    def expired(self, timeout_s: float) -> Iterator[tuple[Any, str]]:
        """Remove and yield (message id, stream) of trees older than ``timeout_s``, oldest
        first."""
        cutoff = self._clock() - timeout_s
        old = []
        for root, entry in self._trees.items():  # one pass: the oldest come first
            if entry[2] > cutoff:
                break
            old.append(root)
        for root in old:
            left = self._trees.pop(root, None)
            if left is not None:
                yield left[0], left[1]
