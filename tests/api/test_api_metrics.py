"""heronpy's metric classes (``heron_core.api.metrics``): values per interval and hints."""

from __future__ import annotations

from typing import Any

import pytest

from heron_core.api import metrics
from heron_core.api.metrics import (
    AssignableMetrics,
    CountMetric,
    IMetric,
    IReducer,
    MeanReducedMetric,
    MeanReducer,
    MultiAssignableMetrics,
    MultiCountMetric,
    MultiMeanReducedMetric,
    MultiReducedMetric,
    ReducedMetric,
)


def test_count_metric_counts_per_interval() -> None:
    count = CountMetric()
    count.incr()
    count.incr(to_add=9)
    assert (count.get_value_and_reset(), count.get_value_and_reset()) == (10, 0)
    assert count.metric_type == "SUM"


def test_multi_count_metric_keeps_its_keys_at_zero() -> None:
    words = MultiCountMetric()
    words.incr("a")
    words.incr("b", to_add=3)
    assert words.get_value_and_reset() == {"a": 1, "b": 3}
    words.incr("a")
    assert words.get_value_and_reset() == {"a": 1, "b": 0}
    assert words.metric_type == "SUM"


def test_mean_reduced_metric_is_the_interval_mean_or_none() -> None:
    mean = MeanReducedMetric()
    for value in (1, 2, 6):
        mean.update(value)
    assert mean.get_value_and_reset() == 3.0
    assert mean.get_value_and_reset() is None
    assert mean.metric_type == "AVG"


def test_multi_mean_reduced_metric_per_key() -> None:
    means = MultiMeanReducedMetric()
    means.update("x", 1)
    means.update("x", 2)
    means.update("y", 10)
    assert means.get_value_and_reset() == {"x": 1.5, "y": 10.0}
    assert means.get_value_and_reset() == {"x": None, "y": None}  # skipped when published
    assert means.metric_type == "AVG"


class Maximum(IReducer):
    def init(self) -> Any:
        return None

    def reduce(self, current: Any, value: Any) -> Any:
        return value if current is None else max(current, value)

    def extract(self, current: Any) -> Any:
        return current


def test_reduced_metrics_with_a_user_reducer_are_gauges() -> None:
    peak, peaks = ReducedMetric(Maximum()), MultiReducedMetric(Maximum())
    for value in (3, 9, 4):
        peak.update(value)
        peaks.update("k", value)
    assert (peak.get_value_and_reset(), peak.get_value_and_reset()) == (9, None)
    assert peaks.get_value_and_reset() == {"k": 9}
    assert (peak.metric_type, peaks.metric_type) == ("LAST", "LAST")
    assert ReducedMetric(MeanReducer()).metric_type == "AVG"


def test_assignable_metrics_are_never_reset() -> None:
    gauge, gauges = AssignableMetrics(1), MultiAssignableMetrics()
    gauge.update(5)
    gauges.update("a", 7)
    gauges.add_key("b", 2)
    assert [gauge.get_value_and_reset() for _ in range(2)] == [5, 5]
    assert gauges.get_value_and_reset() == {"a": 7, "b": 2}
    assert gauge.metric_type == "LAST"


def test_imetric_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        IMetric()  # type: ignore[abstract]


def test_public_names_are_pinned() -> None:
    assert sorted(metrics.__all__) == [
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
