"""Multi stream, as a Topology class: words to the count bolts by fields grouping, and both
the word stream and the "error" stream to every stream aggregator task (ALL grouping)."""

from examples.src.python.bolt import CountBolt, StreamAggregateBolt
from examples.src.python.spout import MultiStreamSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class MultiStream(Topology):
    spout = MultiStreamSpout.spec(par=2)
    count_bolt = CountBolt.spec(
        par=2,
        inputs={spout: Grouping.fields("word")},
        config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 2},
    )
    stream_aggregator = StreamAggregateBolt.spec(
        par=1,
        inputs={spout: Grouping.ALL, spout["error"]: Grouping.ALL},
        config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 3},
    )
