"""Storm's API on the Heron kernel: ``TopologyBuilder`` topologies run unchanged.

Module paths mirror Storm's Java packages (``storm_compat.topology``, ``.topology.base``,
``.spout``, ``.task``, ``.tuple``, ``.grouping``, ``.utils``, ``.testing``); this module holds
``Config``, ``LocalCluster``, ``StormSubmitter`` and ``StormTopology``.

>>> from storm_compat import Config
>>> from storm_compat.testing import TestWordCounter, TestWordSpout
>>> from storm_compat.topology import TopologyBuilder
>>> from storm_compat.tuple import Fields
>>> builder = TopologyBuilder()
>>> _ = builder.setSpout("words", TestWordSpout(), 2)
>>> _ = builder.setBolt("count", TestWordCounter()).fieldsGrouping("words", Fields("word"))
>>> conf = Config()
>>> conf.setNumWorkers(2)
>>> plan = builder.createTopology().to_logical_plan("word-count", conf)
>>> plan.config["topology.stmgrs"], [c.name for c in plan.components]
(2, ['words', 'count'])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from storm_compat._config import Config
from storm_compat.topology import StormTopology

if TYPE_CHECKING:
    from storm_compat._local import LocalCluster
    from storm_compat._submitter import StormSubmitter

__all__ = ["Config", "LocalCluster", "StormSubmitter", "StormTopology"]

# LocalCluster and StormSubmitter bring in the client, executor and state managers: imported on
# first use, so the instance processes that run Storm components do not pay for them.
_LAZY = {"LocalCluster": "storm_compat._local", "StormSubmitter": "storm_compat._submitter"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'storm_compat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
