"""XOR tracking of the tuple trees of the spout tasks in this container (Storm's acker
algorithm, kept in the stream manager as Heron does).

Each tree is one 64-bit value: the XOR of every edge id sent into it (by the spout's *init* and
by bolts' *acks*, which carry the acked tuple's edge XOR its children's edges). XOR commutes, so
the entries may arrive in any order; the value reaches 0 exactly when every edge created has been
acked (a false zero has probability 2^-63). Memory is bounded by rotating buckets: a tree not
completed within the message timeout is dropped (its spout fails it on its own timer).

A tree with an odd root key has no init: its spout sent its only copy with the root key as edge
(``heron_core.instance._anchoring.SpoutTree``), so its value starts at its key, XORed in with the
first entry heard of for it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from heron_core.proto import tuple_pb2

Id = Any
"""A root key or a tree's value (an int), typed Any as ``heron_core.instance._acking.Id`` is:
compiled, an ``int`` would be converted to a C integer and boxed again at every store."""


@dataclass
class Outcomes:
    """What to tell one spout task."""

    acked: list[Id] = field(default_factory=list)
    failed: list[Id] = field(default_factory=list)
    reset: list[Id] = field(default_factory=list)


class TreeTracker:
    """Tree values keyed by root key, per spout task, in ``nbuckets`` rotating buckets (each
    bucket maps a spout task to its root key -> value dict)."""

    def __init__(self, nbuckets: int = 3) -> None:
        if nbuckets < 2:
            raise ValueError(f"nbuckets must be at least 2, got {nbuckets}")
        self._buckets: deque[dict[int, dict[Id, Id]]] = deque([{} for _ in range(nbuckets)])
        self._outcomes: dict[int, Outcomes] = {}

    def __len__(self) -> int:
        return sum(len(trees) for bucket in self._buckets for trees in bucket.values())

    def _outcome(self, task: int) -> Outcomes:
        out = self._outcomes.get(task)
        if out is None:
            out = self._outcomes[task] = Outcomes()
        return out

    def _trees(self, task: int) -> list[dict[Id, Id]]:
        """``task``'s root key -> value dict in each bucket, newest first."""
        return [bucket.setdefault(task, {}) for bucket in self._buckets]

    @staticmethod
    def _pop(trees: list[dict[Id, Id]], key: Id) -> Id:
        for values in trees:
            value = values.pop(key, None)
            if value is not None:
                return value
        return None

    def apply(self, batch: tuple_pb2.AckBatch) -> None:
        """Fold one batch of entries about ``batch.spout_task``'s trees in."""
        task = batch.spout_task
        trees = self._trees(task)
        newest = trees[0]
        acked: list[Id] = []
        key: Id
        value: Id
        current: Id
        for keys, values in (
            (batch.init_keys, batch.init_values),
            (batch.ack_keys, batch.ack_values),
        ):
            for key, value in zip(keys, values, strict=True):
                for held in trees:
                    current = held.get(key)
                    if current is not None:
                        current ^= value
                        if current:
                            held[key] = current
                        else:
                            del held[key]
                            acked.append(key)
                        break
                else:  # a tree not seen yet: an odd key starts at itself (see above)
                    if key & 1:
                        value ^= key
                    if value:
                        newest[key] = value
                    else:
                        acked.append(key)
        if acked:
            self._outcome(task).acked.extend(acked)
        for key in batch.fail_keys:
            self._pop(trees, key)
            self._outcome(task).failed.append(key)
        for key in batch.reset_keys:
            kept = self._pop(trees, key)
            if kept is not None:
                newest[key] = kept
            self._outcome(task).reset.append(key)

    def rotate(self) -> int:
        """Drop the oldest bucket; the number of trees dropped."""
        dropped = sum(len(trees) for trees in self._buckets.pop().values())
        self._buckets.appendleft({})
        return dropped

    def take_outcomes(self) -> dict[int, Outcomes]:
        """Outcomes since the last call, per spout task."""
        outcomes, self._outcomes = self._outcomes, {}
        return outcomes
