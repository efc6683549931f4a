"""Testing topologies (Storm's ``org.apache.storm.Testing`` and ``org.apache.storm.testing``).

>>> from storm_compat.testing import MockedSources, Testing
>>> Testing.readTuples({}, "words")
[]
"""

from storm_compat.testing._complete import CompleteTopologyParam, MockedSources, Testing
from storm_compat.testing._components import (
    FixedTuple,
    FixedTupleSpout,
    TestWordCounter,
    TestWordSpout,
)

__all__ = [
    "CompleteTopologyParam",
    "FixedTuple",
    "FixedTupleSpout",
    "MockedSources",
    "TestWordCounter",
    "TestWordSpout",
    "Testing",
]
