"""``OutputFieldsDeclarer``: how a component declares its output streams."""

from __future__ import annotations

from typing import Any

from heron_core.api import DEFAULT_STREAM, Stream
from storm_compat.tuple import Fields

__all__ = ["OutputFieldsDeclarer"]


class OutputFieldsDeclarer:
    """Collects the streams a component declares in ``declareOutputFields``.

    The overloads follow Storm: ``declare(fields)``, ``declare(direct, fields)``,
    ``declareStream(streamId, fields)``, ``declareStream(streamId, direct, fields)``.

    >>> declarer = OutputFieldsDeclarer("split")
    >>> declarer.declare(Fields("word"))
    >>> declarer.declareStream("lengths", True, Fields("word", "length"))
    >>> declarer.streams
    [Stream(fields=('word',), name='default', direct=False), \
Stream(fields=('word', 'length'), name='lengths', direct=True)]
    """

    def __init__(self, component: str) -> None:
        self.component = component
        self.streams: list[Stream] = []

    def declare(self, *args: Any) -> None:
        """``declare([direct,] fields)``: declare the default stream."""
        self.declareStream(DEFAULT_STREAM, *args)

    def declareStream(self, streamId: str, *args: Any) -> None:
        """``declareStream(streamId, [direct,] fields)``: declare stream ``streamId``.

        Raises:
            TypeError: bad arguments (the message names the component).
            ValueError: the stream is declared twice.
        """
        where = f"component {self.component!r}"
        if len(args) == 1:
            direct, fields = False, args[0]
        elif len(args) == 2:
            direct, fields = args
        else:
            raise TypeError(
                f"{where}: declareStream(streamId, [direct,] fields) got {1 + len(args)} arguments"
            )
        if not isinstance(streamId, str):
            raise TypeError(f"{where}: a stream id must be a str, got {streamId!r}")
        if not isinstance(direct, bool):
            raise TypeError(f"{where}: 'direct' must be a bool, got {direct!r}")
        if isinstance(fields, list | tuple):
            fields = Fields(list(fields))
        if not isinstance(fields, Fields):
            raise TypeError(f"{where}: stream {streamId!r} needs Fields, got {fields!r}")
        if any(s.stream_id == streamId for s in self.streams):
            raise ValueError(f"{where}: fields for stream {streamId!r} already declared")
        self.streams.append(Stream(fields.toList(), name=streamId, direct=direct))
