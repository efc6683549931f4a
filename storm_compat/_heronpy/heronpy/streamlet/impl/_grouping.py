"""The groupings of keyed and repartitioned stages: evaluated by each sending task.

Keys are hashed with a hash that is the same in every process (Python's ``hash`` of a str is
salted per process, so heronpy's ``hash(key) % n`` could send one key to two tasks when the
sending stage has several).

>>> grouping = KeyGrouping("reducebykeyandwindow-1")
>>> grouping.prepare(None, "reducebykeyandwindow-1", "output", [7, 8, 9])
>>> grouping.choose_tasks([("lamb", 1)]) == grouping.choose_tasks([("lamb", 5)])
True
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from heron_core.api import CustomGrouping, TopologyContext
from heron_core.errors import UserCodeError
from heronpy.streamlet.impl import _functions
from heronpy.streamlet.impl._stage import pair

__all__ = ["KeyGrouping", "RepartitionGrouping", "key_hash"]


def key_hash(key: Any) -> int:
    """A non-negative hash of ``key``, equal in every process for equal str, int and bytes
    keys (other keys: by their pickle).

    >>> key_hash("lamb") == key_hash("lamb"), key_hash(7)
    (True, 7)
    """
    if isinstance(key, str):
        return zlib.crc32(key.encode("utf-8", "surrogatepass"))
    if isinstance(key, int):
        return key & 0xFFFFFFFF
    if isinstance(key, bytes):
        return zlib.crc32(key)
    return zlib.crc32(pickle.dumps(key, protocol=4))


class KeyGrouping(CustomGrouping):
    """Sends each ``(key, value)`` element to the task of its key.

    Args:
        stage: the keyed stage, for error messages.
    """

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.target_tasks: list[int] = []

    def prepare(
        self, context: TopologyContext | None, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self.target_tasks = sorted(target_tasks)

    def choose_tasks(self, values: list[Any]) -> list[int]:
        key, _ = pair(values[0], self.stage)
        return [self.target_tasks[key_hash(key) % len(self.target_tasks)]]


class RepartitionGrouping(CustomGrouping):
    """Sends each element to the partitions ``function(element, num_partitions)`` names (an
    index or a list of them, each taken modulo the number of partitions).

    Args:
        stage: the repartition stage, for error messages.
        function: the user's repartition function.
    """

    def __init__(self, stage: str, function: Callable[[Any, int], int | Iterable[int]]) -> None:
        self.stage = stage
        self._payload = _functions.dumps(function, f"repartition function of stage {stage!r}")
        self.target_tasks: list[int] = []

    def prepare(
        self, context: TopologyContext | None, component: str, stream: str, target_tasks: list[int]
    ) -> None:
        self.target_tasks = sorted(target_tasks)
        self._function = _functions.loads(
            self._payload, f"the repartition function of stage {self.stage!r}"
        )

    def choose_tasks(self, values: list[Any]) -> list[int]:
        tasks = self.target_tasks
        chosen = self._function(values[0], len(tasks))
        indexes = chosen if isinstance(chosen, Iterable) else [chosen]
        try:
            return [tasks[int(index) % len(tasks)] for index in indexes]
        except (TypeError, ValueError):
            raise UserCodeError(
                f"stage {self.stage!r}: the repartition function must return a partition "
                f"index or a list of them, got {chosen!r} for element {values[0]!r}"
            ) from None
