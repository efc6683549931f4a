"""Flux's wrappers (Storm's ``org.apache.storm.flux.wrappers``), named by the Java class names
a Flux file uses (``...wrappers.bolts.FluxShellBolt``, ``...wrappers.spouts.FluxShellSpout``,
``...wrappers.bolts.LogInfoBolt``).

>>> from storm_compat.flux.wrappers import FluxShellSpout
>>> FluxShellSpout(["python3", "randomsentence.py"], ["sentence"]).outputFields
{'default': ['sentence']}
"""

from storm_compat.flux.wrappers._wrappers import FluxShellBolt, FluxShellSpout, LogInfoBolt

__all__ = ["FluxShellBolt", "FluxShellSpout", "LogInfoBolt"]
