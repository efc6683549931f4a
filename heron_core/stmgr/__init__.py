"""The Stream Manager daemon (``python -m heron_core.stmgr``)."""

from heron_core.stmgr._manager import StMgrArgs, StreamManager

__all__ = ["StMgrArgs", "StreamManager"]
