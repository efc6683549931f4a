"""Stateful word count: two stateful word spouts, two stateful count bolts by fields grouping,
effectively once with a checkpoint every 30 s.

Usage (as Heron's): the topology name is the first argument.
"""

import sys

from examples.src.python.bolt import StatefulCountBolt
from examples.src.python.spout import StatefulWordSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("Topology's name is not specified")
        sys.exit(1)

    builder = TopologyBuilder(name=sys.argv[1])
    word_spout = builder.add_spout("word_spout", StatefulWordSpout, par=2)
    count_bolt = builder.add_bolt(
        "count_bolt",
        StatefulCountBolt,
        par=2,
        inputs={word_spout: Grouping.fields("word")},
        config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10},
    )
    builder.set_config(
        {
            constants.TOPOLOGY_RELIABILITY_MODE: constants.TopologyReliabilityMode.EFFECTIVELY_ONCE,
            constants.TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS: 30,
        }
    )
    builder.build_and_submit()
