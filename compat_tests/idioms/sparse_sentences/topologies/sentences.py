"""
Sentences from a file, split onto two named streams, tallied per stream
"""

from bolts.split import SplitBolt
from bolts.tally import TallyBolt
from spouts.sentences import SentenceSpout
from streamparse import Grouping, Topology


class Sentences(Topology):
    sentence_spout = SentenceSpout.spec()
    split_bolt = SplitBolt.spec(inputs=[sentence_spout])
    short_tally = TallyBolt.spec(inputs={split_bolt["short"]: Grouping.fields("word")})
    long_tally = TallyBolt.spec(inputs={split_bolt["long"]: Grouping.fields("word")})
