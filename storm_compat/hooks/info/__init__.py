"""What Storm's task hooks are told (``org.apache.storm.hooks.info``).

>>> from storm_compat.hooks.info import SpoutAckInfo
>>> SpoutAckInfo("msg-1", 4, 12).completeLatencyMs
12
"""

from storm_compat.hooks._info import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    SpoutAckInfo,
    SpoutFailInfo,
)

__all__ = [
    "BoltAckInfo",
    "BoltExecuteInfo",
    "BoltFailInfo",
    "EmitInfo",
    "SpoutAckInfo",
    "SpoutFailInfo",
]
