"""User metrics, as heronpy's ``heronpy.api.metrics``: register one with
``context.register_metric(name, metric, time_bucket_in_sec)`` in ``initialize``.

>>> from heron_core.api.metrics import CountMetric, MeanReducedMetric
>>> processed, latency = CountMetric(), MeanReducedMetric()
>>> processed.incr(); latency.update(12.0)
>>> processed.get_value_and_reset(), latency.get_value_and_reset()
(1, 12.0)
"""

from heron_core.api._metrics import (
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
