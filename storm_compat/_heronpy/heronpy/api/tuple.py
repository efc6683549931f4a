"""heronpy's ``tuple``: ``Tuple`` and ``TupleHelper``.

``Tuple`` is the native received tuple (`heron_core.api.Tuple`): heronpy's namedtuple fields
``id component stream task values``, in that order, unpacking and indexing like it, and
built with the same positional or keyword arguments.

>>> Tuple(id="1", component="word_spout", stream="default", task=3, values=["heron"]).values
['heron']
>>> TupleHelper.TICK_TUPLE_ID, TupleHelper.TICK_SOURCE_COMPONENT
('__tick', '__system')
"""

from heron_core.api import Tuple
from heron_core.api.constants import SYSTEM_COMPONENT, TICK_STREAM

__all__ = ["Tuple", "TupleHelper"]


class TupleHelper:
    """The names of tick tuples: their stream (and id) and their source component."""

    TICK_TUPLE_ID = TICK_STREAM
    TICK_SOURCE_COMPONENT = SYSTEM_COMPONENT
