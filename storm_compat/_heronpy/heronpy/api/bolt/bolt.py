"""heronpy's ``bolt.bolt``: ``Bolt``, what a heronpy bolt subclasses.

>>> from collections import Counter
>>> class CountBolt(Bolt):
...     def initialize(self, config, context):
...         self.counter = Counter()
...     def process(self, tup):
...         self.counter[tup.values[0]] += 1
...         self.ack(tup)
>>> CountBolt.spec(par=2, inputs=[]).is_spout
False
"""

from heronpy.api.bolt.base_bolt import BaseBolt

__all__ = ["Bolt"]


class Bolt(BaseBolt):
    """A tuple processor: implement ``process(tup)`` and optionally ``initialize``,
    ``process_tick(tup)`` (tick tuples, ``topology.tick.tuple.freq.secs``; never acked) and
    ``close``. Call ``self.ack(tup)`` or ``self.fail(tup)`` for every input and pass
    ``anchors=[tup]`` to emits that belong to its tree: nothing is automatic."""
