"""Storm's metric API (``org.apache.storm.metric.api``): what a task registers with
``TopologyContext.registerMetric(name, metric, timeBucketSizeInSecs)``.

>>> from storm_compat.metric.api import CountMetric, MeanReducer, ReducedMetric
>>> emitted, size = CountMetric(), ReducedMetric(MeanReducer())
>>> emitted.incrBy(3); size.update(10); size.update(20)
>>> emitted.getValueAndReset(), size.getValueAndReset()
(3, 15.0)
"""

from storm_compat.metric.api._metrics import (
    AssignableMetric,
    CombinedMetric,
    CountMetric,
    ICombiner,
    IMetric,
    IReducer,
    MeanReducer,
    MultiCountMetric,
    MultiReducedMetric,
    ReducedMetric,
)

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
