"""Base classes for spouts and bolts (Storm's ``org.apache.storm.topology.base``).

>>> from storm_compat.topology.base import BaseBasicBolt, BaseRichBolt, BaseRichSpout
>>> sorted(BaseRichSpout.__abstractmethods__)
['declareOutputFields', 'nextTuple', 'open']
"""

from storm_compat.topology.base._base import (
    BaseBasicBolt,
    BaseComponent,
    BaseRichBolt,
    BaseRichSpout,
)
from storm_compat.topology.base._stateful import BaseStatefulBolt
from storm_compat.topology.base._windowed import BaseWindowedBolt

__all__ = [
    "BaseBasicBolt",
    "BaseComponent",
    "BaseRichBolt",
    "BaseRichSpout",
    "BaseStatefulBolt",
    "BaseWindowedBolt",
]
