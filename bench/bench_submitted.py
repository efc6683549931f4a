"""The topology file the cluster cases submit with ``heron submit <cluster> bench_submitted.py``
(bench_clusters.py): the native word count, spout -> split (shuffle) -> count (fields grouping
on the word), parallelism 1 per component, as ``bench_harness`` builds it for the ``native-*``
cases, except that the split bolt stamps its first input (`FirstTupleSplitBolt`).

What changes from run to run is read from `PARAMETERS` beside this file, which the driver
writes before it submits (the file is shipped with the topology's code, though only this
module, in the submitting process, reads it):

- ``name``: the topology's name;
- ``sentences``: the size of the corpus;
- ``acking``: message ids on the spout's tuples (the reliability mode itself is a config key
  the driver passes on the command line);
- ``directory``: where the spout and the split bolt write their timestamps;
- ``corpus``: the file of sentences the spout reads (see `CorpusSpout`).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench_components import CorpusSpout, FirstTupleSplitBolt
from word_count import CountBolt

from heron_core.api import Grouping, TopologyBuilder

PARAMETERS = Path(__file__).with_name("bench-case.json")


def _builder() -> TopologyBuilder:
    parameters = json.loads(PARAMETERS.read_text())
    directory = str(parameters["directory"])
    spout = CorpusSpout(
        int(parameters["sentences"]),
        bool(parameters["acking"]),
        None,
        directory,
        corpus=str(parameters["corpus"]),
    )
    builder = TopologyBuilder(str(parameters["name"]))
    source = builder.add_spout("sentence", spout)
    split = builder.add_bolt(
        "split", FirstTupleSplitBolt(directory), inputs={source: Grouping.SHUFFLE}
    )
    builder.add_bolt("count", CountBolt, inputs={split: Grouping.fields("word")})
    return builder


topology = _builder()
