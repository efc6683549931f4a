"""heronpy's ``spout.spout``: ``Spout``, what a heronpy spout subclasses.

>>> class WordSpout(Spout):
...     outputs = ["word"]
...     def initialize(self, config, context):
...         self.words = iter(["hello", "heron"])
...     def next_tuple(self):
...         self.emit([next(self.words)], tup_id="message id")
>>> WordSpout.spec(par=2).par
2
"""

from heronpy.api.spout.base_spout import BaseSpout

__all__ = ["Spout"]


class Spout(BaseSpout):
    """A source of tuples: set ``outputs``, implement ``next_tuple`` (must not block), and
    optionally ``initialize``, ``ack(tup_id)``, ``fail(tup_id)``, ``activate``,
    ``deactivate`` and ``close``.

    Emits with a ``tup_id`` are tracked only when ``topology.reliability.mode`` is
    ``ATLEAST_ONCE``; in heronpy's default ``ATMOST_ONCE`` they are acked at once.
    """
