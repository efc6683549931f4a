"""Bolt-side task API (Storm's ``org.apache.storm.task``).

>>> from storm_compat.task import OutputCollector, TopologyContext
>>> OutputCollector.__name__, TopologyContext.__name__
('OutputCollector', 'TopologyContext')
"""

from storm_compat.task._collector import OutputCollector
from storm_compat.task._context import TopologyContext
from storm_compat.task._interfaces import IBolt

__all__ = ["IBolt", "OutputCollector", "TopologyContext"]
