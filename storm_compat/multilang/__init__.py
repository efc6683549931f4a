"""Multilang components for Storm-facade topologies: Storm's ``ShellBolt`` and ``ShellSpout``.

Subclass them as in Storm (``super().__init__("python3", "splitsentence.py")`` and
``declareOutputFields``); the scripts speak Storm's multilang protocol (bring Storm's own
``storm.py``, or use pystorm) and run through the kernel's host, ``heron_core.multilang``.

>>> from storm_compat.multilang import ShellBolt
>>> from storm_compat.tuple import Fields
>>> class SplitSentence(ShellBolt):
...     def __init__(self):
...         super().__init__("python3", "splitsentence.py")
...     def declareOutputFields(self, declarer):
...         declarer.declare(Fields("word"))
>>> SplitSentence().command
('python3', 'splitsentence.py')
"""

from storm_compat.multilang._shell import ShellBolt, ShellSpout

__all__ = ["ShellBolt", "ShellSpout"]
