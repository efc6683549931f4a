"""Window size: a sliding window bolt (4 s windows every second) logs each window's size."""

import sys

from examples.src.python.bolt import WindowSizeBolt
from examples.src.python.spout import WordSpout

import heronpy.api.api_constants as constants
from heronpy.api.bolt.window_bolt import SlidingWindowBolt
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("Topology's name is not specified")
        sys.exit(1)

    builder = TopologyBuilder(name=sys.argv[1])
    word_spout = builder.add_spout("word_spout", WordSpout, par=2)
    count_bolt = builder.add_bolt(
        "count_bolt",
        WindowSizeBolt,
        par=2,
        inputs={word_spout: Grouping.fields("word")},
        config={
            SlidingWindowBolt.WINDOW_DURATION_SECS: 4,
            SlidingWindowBolt.WINDOW_SLIDEINTERVAL_SECS: 1,
        },
    )
    builder.set_config(
        {constants.TOPOLOGY_RELIABILITY_MODE: constants.TopologyReliabilityMode.ATLEAST_ONCE}
    )
    builder.build_and_submit()
