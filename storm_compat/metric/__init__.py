"""Storm's ``org.apache.storm.metric``: the metric API lives in `storm_compat.metric.api`.

>>> from storm_compat.metric.api import CountMetric
>>> CountMetric.__name__
'CountMetric'
"""

__all__: list[str] = []
