"""XOR tracking of the tuple trees of the spout tasks in this container (Storm's acker
algorithm, kept in the stream manager as Heron does).

Each tree is one 64-bit value: the XOR of every edge id sent into it (by the spout's *init* and
by bolts' *acks*, which carry the acked tuple's edge XOR its children's edges). XOR commutes, so
the entries may arrive in any order; the value reaches 0 exactly when every edge created has been
acked (a false zero has probability 2^-64). Memory is bounded by rotating buckets: a tree not
completed within the message timeout is dropped (its spout fails it on its own timer).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from heron_core.proto import tuple_pb2


@dataclass
class Outcomes:
    """What to tell one spout task."""

    acked: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    reset: list[int] = field(default_factory=list)


class TreeTracker:
    """Tree values keyed by (spout task, root key), in ``nbuckets`` rotating buckets."""

    def __init__(self, nbuckets: int = 3) -> None:
        if nbuckets < 2:
            raise ValueError(f"nbuckets must be at least 2, got {nbuckets}")
        self._buckets: deque[dict[tuple[int, int], int]] = deque({} for _ in range(nbuckets))
        self._outcomes: dict[int, Outcomes] = {}

    def __len__(self) -> int:
        return sum(len(b) for b in self._buckets)

    def _outcome(self, task: int) -> Outcomes:
        out = self._outcomes.get(task)
        if out is None:
            out = self._outcomes[task] = Outcomes()
        return out

    def _xor(self, task: int, key: int, value: int) -> None:
        node = (task, key)
        for bucket in self._buckets:
            current = bucket.get(node)
            if current is not None:
                current ^= value
                if current:
                    bucket[node] = current
                else:
                    del bucket[node]
                    self._outcome(task).acked.append(key)
                return
        if value:
            self._buckets[0][node] = value
        else:
            self._outcome(task).acked.append(key)

    def _pop(self, node: tuple[int, int]) -> int | None:
        for bucket in self._buckets:
            value = bucket.pop(node, None)
            if value is not None:
                return value
        return None

    def apply(self, batch: tuple_pb2.AckBatch) -> None:
        """Fold one batch of entries about ``batch.spout_task``'s trees in."""
        task = batch.spout_task
        xor = self._xor
        for key, value in zip(batch.init_keys, batch.init_values, strict=True):
            xor(task, key, value)
        for key, value in zip(batch.ack_keys, batch.ack_values, strict=True):
            xor(task, key, value)
        for key in batch.fail_keys:
            self._pop((task, key))
            self._outcome(task).failed.append(key)
        for key in batch.reset_keys:
            kept = self._pop((task, key))
            if kept is not None:
                self._buckets[0][(task, key)] = kept
            self._outcome(task).reset.append(key)

    def rotate(self) -> int:
        """Drop the oldest bucket; the number of trees dropped."""
        dropped = len(self._buckets.pop())
        self._buckets.appendleft({})
        return dropped

    def take_outcomes(self) -> dict[int, Outcomes]:
        """Outcomes since the last call, per spout task."""
        outcomes, self._outcomes = self._outcomes, {}
        return outcomes
