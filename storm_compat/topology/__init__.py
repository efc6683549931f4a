"""Building topologies (Storm's ``org.apache.storm.topology``).

>>> from storm_compat.topology import TopologyBuilder
>>> from storm_compat.testing import TestWordSpout
>>> builder = TopologyBuilder()
>>> _ = builder.setSpout("words", TestWordSpout())
>>> [c.id for c in builder.createTopology().components]
['words']
"""

from storm_compat.topology._basic import (
    BasicOutputCollector,
    FailedException,
    ReportedFailedException,
)
from storm_compat.topology._builder import (
    BoltDeclarer,
    SpoutDeclarer,
    StormTopology,
    TopologyBuilder,
)
from storm_compat.topology._declarer import OutputFieldsDeclarer
from storm_compat.topology._interfaces import IBasicBolt, IComponent, IRichBolt, IRichSpout
from storm_compat.topology.base._stateful import IStatefulBolt, IStatefulComponent
from storm_compat.windowing._executor import (
    IWindowedBolt,
    TupleFieldTimestampExtractor,
    WindowedBoltExecutor,
)

__all__ = [
    "BasicOutputCollector",
    "BoltDeclarer",
    "FailedException",
    "IBasicBolt",
    "IComponent",
    "IRichBolt",
    "IRichSpout",
    "IStatefulBolt",
    "IStatefulComponent",
    "IWindowedBolt",
    "OutputFieldsDeclarer",
    "ReportedFailedException",
    "SpoutDeclarer",
    "StormTopology",
    "TopologyBuilder",
    "TupleFieldTimestampExtractor",
    "WindowedBoltExecutor",
]
