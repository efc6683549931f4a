"""Helpers of Storm's ``org.apache.storm.utils`` that topologies use.

>>> from storm_compat.tuple import Fields, Tuple
>>> TupleUtils.isTick(Tuple.of([5], Fields("rate_secs"), component="__system", stream="__tick"))
True
"""

from storm_compat.utils._tuple_utils import TupleUtils
from storm_compat.utils._utils import Utils

__all__ = ["TupleUtils", "Utils"]
