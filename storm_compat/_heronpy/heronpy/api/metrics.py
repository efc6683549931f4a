"""heronpy's ``metrics``: the user metric classes, the native ones (`heron_core.api.metrics`).

Register one with ``context.register_metric(name, metric, time_bucket_in_sec)``.

>>> counter = MultiCountMetric()
>>> counter.incr("heron"); counter.incr("heron", 2)
>>> counter.get_value_and_reset()
{'heron': 3}
"""

from heron_core.api.metrics import (
    AssignableMetrics,
    CountMetric,
    IMetric,
    IReducer,
    MeanReducer,
    MultiAssignableMetrics,
    MultiCountMetric,
    MultiReducedMetric,
    ReducedMetric,
)

__all__ = [
    "AssignableMetrics",
    "CountMetric",
    "IMetric",
    "IReducer",
    "MeanReducer",
    "MultiAssignableMetrics",
    "MultiCountMetric",
    "MultiReducedMetric",
    "ReducedMetric",
]
