"""User metrics (heronpy's ``heronpy.api.metrics``): objects a task registers with
``context.register_metric(name, metric, time_bucket_in_sec)``.

A metric is any object with ``get_value_and_reset()``. Every ``time_bucket_in_sec`` the instance
calls it on the task's thread (never concurrently with the task's callbacks) and publishes the
value under ``name``: None is skipped, a dict is published as one value per key
(``name/key``), anything else as its ``str``. An optional ``metric_type`` attribute ("SUM",
"AVG" or "LAST") tells the metrics manager how the values of successive intervals combine;
without one they are gauges (LAST).
"""

from __future__ import annotations

import abc
from collections.abc import Hashable
from typing import Any, ClassVar

__all__ = [
    "AssignableMetrics",
    "CountMetric",
    "IMetric",
    "IReducer",
    "MeanReducedMetric",
    "MeanReducer",
    "MultiAssignableMetrics",
    "MultiCountMetric",
    "MultiMeanReducedMetric",
    "MultiReducedMetric",
    "ReducedMetric",
]


class IMetric(abc.ABC):
    """A user metric: the value accumulated since the previous call.

    Attributes:
        metric_type: how successive intervals' values combine: "SUM" (counts), "AVG"
            (means) or "LAST" (gauges, the default).
    """

    metric_type: ClassVar[str] = "LAST"

    @abc.abstractmethod
    def get_value_and_reset(self) -> Any:
        """The value of the interval that ends now (None: nothing to publish); starts the
        next interval."""


class CountMetric(IMetric):
    """A counter; each interval publishes what was added during it.

    >>> count = CountMetric()
    >>> count.incr(); count.incr(4)
    >>> count.get_value_and_reset(), count.get_value_and_reset()
    (5, 0)
    """

    metric_type = "SUM"

    def __init__(self) -> None:
        self.value = 0

    def incr(self, to_add: int = 1) -> None:
        """Add ``to_add`` (default 1)."""
        self.value += to_add

    def get_value_and_reset(self) -> int:
        value, self.value = self.value, 0
        return value


class MultiCountMetric(IMetric):
    """Counters by key, published as ``name/key``; a key seen once stays (at 0).

    >>> words = MultiCountMetric()
    >>> words.incr("storm"); words.incr("heron", 2); words.add_key("flink")
    >>> words.get_value_and_reset()
    {'storm': 1, 'heron': 2, 'flink': 0}
    >>> words.get_value_and_reset()
    {'storm': 0, 'heron': 0, 'flink': 0}
    """

    metric_type = "SUM"

    def __init__(self) -> None:
        self.value: dict[Hashable, CountMetric] = {}

    def add_key(self, key: Hashable) -> None:
        """Publish ``key`` from now on, even at 0."""
        if key not in self.value:
            self.value[key] = CountMetric()

    def incr(self, key: Hashable, to_add: int = 1) -> None:
        """Add ``to_add`` (default 1) to ``key``'s counter."""
        counter = self.value.get(key)
        if counter is None:
            counter = self.value[key] = CountMetric()
        counter.incr(to_add)

    def get_value_and_reset(self) -> dict[Hashable, int]:
        return {key: counter.get_value_and_reset() for key, counter in self.value.items()}


class IReducer(abc.ABC):
    """How a `ReducedMetric` folds the values it is updated with into one per interval."""

    @abc.abstractmethod
    def init(self) -> Any:
        """The state of a fresh interval."""

    @abc.abstractmethod
    def reduce(self, current: Any, value: Any) -> Any:
        """The state after ``value`` was added to ``current`` (may update it in place)."""

    @abc.abstractmethod
    def extract(self, current: Any) -> Any:
        """The interval's value from its final state (None: nothing to publish)."""


class MeanReducer(IReducer):
    """The mean of an interval's values (None for an interval without any).

    >>> reducer = MeanReducer()
    >>> reducer.extract(reducer.reduce(reducer.reduce(reducer.init(), 1), 4))
    2.5
    """

    def init(self) -> list[float]:
        return [0.0, 0]  # sum, count

    def reduce(self, current: list[float], value: float) -> list[float]:
        current[0] += value
        current[1] += 1
        return current

    def extract(self, current: list[float]) -> float | None:
        return current[0] / current[1] if current[1] else None


def _type_of(reducer: IReducer) -> str:
    return "AVG" if isinstance(reducer, MeanReducer) else "LAST"


class ReducedMetric(IMetric):
    """One value per interval, folded by ``reducer`` from the values given to `update`.

    Its ``metric_type`` is "AVG" with a `MeanReducer`, else "LAST".

    >>> latency = ReducedMetric(MeanReducer())
    >>> latency.update(10); latency.update(20)
    >>> latency.get_value_and_reset(), latency.get_value_and_reset()
    (15.0, None)
    """

    def __init__(self, reducer: IReducer) -> None:
        self.reducer = reducer
        self.value = reducer.init()
        self.metric_type = _type_of(reducer)  # type: ignore[misc]

    def update(self, value: Any) -> None:
        """Fold ``value`` into this interval."""
        self.value = self.reducer.reduce(self.value, value)

    def get_value_and_reset(self) -> Any:
        value = self.reducer.extract(self.value)
        self.value = self.reducer.init()
        return value


class MultiReducedMetric(IMetric):
    """A `ReducedMetric` per key, published as ``name/key`` (keys without values this
    interval are left out).

    >>> latency = MultiReducedMetric(MeanReducer())
    >>> latency.update("a", 1); latency.update("a", 3); latency.add_key("b")
    >>> latency.get_value_and_reset()
    {'a': 2.0, 'b': None}
    """

    def __init__(self, reducer: IReducer) -> None:
        self.reducer = reducer
        self.value: dict[Hashable, ReducedMetric] = {}
        self.metric_type = _type_of(reducer)  # type: ignore[misc]

    def add_key(self, key: Hashable) -> None:
        """Track ``key`` from now on."""
        if key not in self.value:
            self.value[key] = ReducedMetric(self.reducer)

    def update(self, key: Hashable, value: Any) -> None:
        """Fold ``value`` into ``key``'s interval."""
        self.add_key(key)
        self.value[key].update(value)

    def get_value_and_reset(self) -> dict[Hashable, Any]:
        return {key: metric.get_value_and_reset() for key, metric in self.value.items()}


class MeanReducedMetric(ReducedMetric):
    """The mean of each interval's values (`ReducedMetric` with a `MeanReducer`).

    >>> mean = MeanReducedMetric()
    >>> mean.update(1); mean.update(2)
    >>> mean.get_value_and_reset(), mean.metric_type
    (1.5, 'AVG')
    """

    def __init__(self) -> None:
        super().__init__(MeanReducer())


class MultiMeanReducedMetric(MultiReducedMetric):
    """The mean of each interval's values per key (published as ``name/key``).

    >>> means = MultiMeanReducedMetric()
    >>> means.update("x", 2); means.update("x", 4)
    >>> means.get_value_and_reset()
    {'x': 3.0}
    """

    def __init__(self) -> None:
        super().__init__(MeanReducer())


class AssignableMetrics(IMetric):
    """A gauge: the newest value given to `update`, published every interval (never reset).

    >>> gauge = AssignableMetrics(0)
    >>> gauge.update(7)
    >>> gauge.get_value_and_reset(), gauge.get_value_and_reset()
    (7, 7)
    """

    def __init__(self, init_val: Any) -> None:
        self.value = init_val

    def update(self, value: Any) -> None:
        """Set the gauge."""
        self.value = value

    def get_value_and_reset(self) -> Any:
        return self.value


class MultiAssignableMetrics(IMetric):
    """Gauges by key, published as ``name/key``.

    >>> gauges = MultiAssignableMetrics()
    >>> gauges.update("queue", 3)
    >>> gauges.get_value_and_reset()
    {'queue': 3}
    """

    def __init__(self) -> None:
        self.value: dict[Hashable, AssignableMetrics] = {}

    def add_key(self, key: Hashable, init_val: Any = 0) -> None:
        """Publish ``key`` from now on, starting at ``init_val``."""
        if key not in self.value:
            self.value[key] = AssignableMetrics(init_val)

    def update(self, key: Hashable, value: Any) -> None:
        """Set ``key``'s gauge."""
        self.add_key(key)
        self.value[key].update(value)

    def get_value_and_reset(self) -> dict[Hashable, Any]:
        return {key: metric.get_value_and_reset() for key, metric in self.value.items()}
