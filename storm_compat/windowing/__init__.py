"""Windows of tuples (Storm's ``org.apache.storm.windowing``): what a windowed bolt's
``execute`` gets, and how event time is read from a tuple.

Windowed bolts themselves are ``storm_compat.topology.base.BaseWindowedBolt`` (configure the
window with its builder methods) or any ``storm_compat.topology.IWindowedBolt``.

>>> from storm_compat.windowing import TupleWindowImpl
>>> TupleWindowImpl([], [], []).getEndTimestamp() is None
True
"""

from storm_compat.windowing._window import (
    TimestampExtractor,
    TimeUnit,
    TupleWindow,
    TupleWindowImpl,
    Window,
)

__all__ = ["TimeUnit", "TimestampExtractor", "TupleWindow", "TupleWindowImpl", "Window"]
