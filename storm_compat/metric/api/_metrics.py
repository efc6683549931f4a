"""Storm's metric classes. Each has Storm's ``getValueAndReset`` and the kernel's
``get_value_and_reset`` (the instance reads it on the task's thread every time bucket) and a
``metric_type`` hint: counts are SUM, means AVG, anything else LAST."""

from __future__ import annotations

import abc
from numbers import Number
from typing import Any, ClassVar

__all__ = [
    "AssignableMetric",
    "CombinedMetric",
    "CountMetric",
    "ICombiner",
    "IMetric",
    "IReducer",
    "MeanReducer",
    "MultiCountMetric",
    "MultiReducedMetric",
    "ReducedMetric",
]


class IMetric(abc.ABC):
    """A metric: ``getValueAndReset`` returns the value of the bucket that ends now (None:
    nothing is published; a dict: one value per key, published as ``name/key``)."""

    metric_type: ClassVar[str] = "LAST"

    @abc.abstractmethod
    def getValueAndReset(self) -> Any:
        """The value of the bucket that ends now; starts the next bucket."""

    def get_value_and_reset(self) -> Any:
        """``getValueAndReset`` under the kernel's name."""
        return self.getValueAndReset()


class CountMetric(IMetric):
    """A counter; each bucket publishes what was added during it.

    >>> count = CountMetric()
    >>> count.incr(); count.incrBy(2)
    >>> count.getValueAndReset(), count.getValueAndReset()
    (3, 0)
    """

    metric_type = "SUM"

    def __init__(self) -> None:
        self._value = 0

    def incr(self) -> None:
        """Add 1."""
        self._value += 1

    def incrBy(self, incrementBy: int) -> None:
        """Add ``incrementBy``."""
        self._value += incrementBy

    def getValueAndReset(self) -> int:
        value, self._value = self._value, 0
        return value


class MultiCountMetric(IMetric):
    """A `CountMetric` per key (``scope(key)``), published as ``name/key``.

    >>> words = MultiCountMetric()
    >>> words.scope("storm").incr(); words.scope("heron").incrBy(2)
    >>> words.getValueAndReset()
    {'storm': 1, 'heron': 2}
    """

    metric_type = "SUM"

    def __init__(self) -> None:
        self._value: dict[str, CountMetric] = {}

    def scope(self, key: str) -> CountMetric:
        """The counter of ``key`` (made on first use)."""
        counter = self._value.get(key)
        if counter is None:
            counter = self._value[key] = CountMetric()
        return counter

    def getValueAndReset(self) -> dict[str, int]:
        return {key: counter.getValueAndReset() for key, counter in self._value.items()}


class IReducer(abc.ABC):
    """Folds a bucket's values into one (for `ReducedMetric`)."""

    @abc.abstractmethod
    def init(self) -> Any:
        """The accumulator of a fresh bucket."""

    @abc.abstractmethod
    def reduce(self, accumulator: Any, input: Any) -> Any:
        """The accumulator after ``input`` (may update it in place)."""

    @abc.abstractmethod
    def extractResult(self, accumulator: Any) -> Any:
        """The bucket's value (None: nothing to publish)."""


class MeanReducer(IReducer):
    """The mean of a bucket's numbers (None for a bucket without any).

    >>> reducer = MeanReducer()
    >>> reducer.extractResult(reducer.reduce(reducer.reduce(reducer.init(), 2), 3))
    2.5
    >>> reducer.reduce(reducer.init(), "x")
    Traceback (most recent call last):
    ...
    TypeError: MeanReducer.reduce takes numbers, got str 'x'
    """

    def init(self) -> list[float]:
        return [0.0, 0]  # sum, count

    def reduce(self, accumulator: list[float], input: Any) -> list[float]:
        if not isinstance(input, Number) or isinstance(input, bool):
            raise TypeError(
                f"MeanReducer.reduce takes numbers, got {type(input).__name__} {input!r}"
            )
        accumulator[0] += input  # type: ignore[operator]
        accumulator[1] += 1
        return accumulator

    def extractResult(self, accumulator: list[float]) -> float | None:
        return accumulator[0] / accumulator[1] if accumulator[1] else None


class ReducedMetric(IMetric):
    """A bucket's values given to `update`, folded by ``reducer`` (AVG with a
    `MeanReducer`, else LAST).

    >>> mean = ReducedMetric(MeanReducer())
    >>> mean.update(4); mean.update(8)
    >>> mean.getValueAndReset(), mean.getValueAndReset(), mean.metric_type
    (6.0, None, 'AVG')
    """

    def __init__(self, reducer: IReducer) -> None:
        self._reducer = reducer
        self._accumulator = reducer.init()
        self.metric_type = "AVG" if isinstance(reducer, MeanReducer) else "LAST"  # type: ignore[misc]

    def update(self, value: Any) -> None:
        """Fold ``value`` into this bucket."""
        self._accumulator = self._reducer.reduce(self._accumulator, value)

    def getValueAndReset(self) -> Any:
        value = self._reducer.extractResult(self._accumulator)
        self._accumulator = self._reducer.init()
        return value


class MultiReducedMetric(IMetric):
    """A `ReducedMetric` per key (``scope(key)``); keys without a value this bucket are left
    out.

    >>> means = MultiReducedMetric(MeanReducer())
    >>> means.scope("a").update(1); means.scope("a").update(2); _ = means.scope("b")
    >>> means.getValueAndReset()
    {'a': 1.5}
    """

    def __init__(self, reducer: IReducer) -> None:
        self._reducer = reducer
        self._value: dict[str, ReducedMetric] = {}
        self.metric_type = "AVG" if isinstance(reducer, MeanReducer) else "LAST"  # type: ignore[misc]

    def scope(self, key: str) -> ReducedMetric:
        """The metric of ``key`` (made on first use)."""
        metric = self._value.get(key)
        if metric is None:
            metric = self._value[key] = ReducedMetric(self._reducer)
        return metric

    def getValueAndReset(self) -> dict[str, Any]:
        values = {key: metric.getValueAndReset() for key, metric in self._value.items()}
        return {key: value for key, value in values.items() if value is not None}


class ICombiner(abc.ABC):
    """Combines a bucket's values pairwise, from ``identity`` (for `CombinedMetric`)."""

    @abc.abstractmethod
    def identity(self) -> Any:
        """The value of an empty bucket."""

    @abc.abstractmethod
    def combine(self, a: Any, b: Any) -> Any:
        """``a`` combined with ``b``."""


class CombinedMetric(IMetric):
    """A bucket's values combined by ``combiner`` (published as a gauge).

    >>> class Max(ICombiner):
    ...     def identity(self): return 0
    ...     def combine(self, a, b): return max(a, b)
    >>> peak = CombinedMetric(Max())
    >>> peak.update(3); peak.update(9); peak.update(4)
    >>> peak.getValueAndReset(), peak.getValueAndReset()
    (9, 0)
    """

    def __init__(self, combiner: ICombiner) -> None:
        self._combiner = combiner
        self._value = combiner.identity()

    def update(self, value: Any) -> None:
        """Combine ``value`` into this bucket."""
        self._value = self._combiner.combine(self._value, value)

    def getValueAndReset(self) -> Any:
        value, self._value = self._value, self._combiner.identity()
        return value


class AssignableMetric(IMetric):
    """A gauge: the newest value set, published every bucket.

    >>> gauge = AssignableMetric(1)
    >>> gauge.setValue(5)
    >>> gauge.getValueAndReset(), gauge.getValueAndReset()
    (5, 5)
    """

    def __init__(self, value: Any) -> None:
        self._value = value

    def setValue(self, value: Any) -> None:
        """Set the gauge."""
        self._value = value

    def getValueAndReset(self) -> Any:
        return self._value
