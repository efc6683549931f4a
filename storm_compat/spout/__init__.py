"""Spout-side API (Storm's ``org.apache.storm.spout``).

>>> from storm_compat.spout import ISpout, SpoutOutputCollector
>>> SpoutOutputCollector.__name__
'SpoutOutputCollector'
"""

from storm_compat.spout._collector import SpoutOutputCollector
from storm_compat.spout._interfaces import ISpout

__all__ = ["ISpout", "SpoutOutputCollector"]
