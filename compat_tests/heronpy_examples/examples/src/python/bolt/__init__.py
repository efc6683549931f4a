"""Example bolts."""

from .consume_bolt import ConsumeBolt
from .count_bolt import CountBolt
from .half_ack_bolt import HalfAckBolt
from .stateful_count_bolt import StatefulCountBolt
from .stream_aggregate_bolt import StreamAggregateBolt
from .window_size_bolt import WindowSizeBolt

__all__ = [
    "ConsumeBolt",
    "CountBolt",
    "HalfAckBolt",
    "StatefulCountBolt",
    "StreamAggregateBolt",
    "WindowSizeBolt",
]
