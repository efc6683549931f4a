"""Tuples and their schemas (Storm's ``org.apache.storm.tuple``).

>>> from storm_compat.tuple import Fields, Values
>>> Fields("word").select(Fields("word"), Values("storm"))
['storm']
"""

from storm_compat.tuple._fields import Fields, Values
from storm_compat.tuple._tuple import Tuple

__all__ = ["Fields", "Tuple", "Values"]
