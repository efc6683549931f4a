"""Storm's thrift topologies (``storm.thrift`` through thriftpy2) as logical plans, and back.

A ``StormTopology`` (what Storm's ``TopologyBuilder.createTopology()``, Petrel and streamparse's
``Topology`` classes produce) becomes a `heron_core.plan.LogicalPlan`: shell components run as
multilang subprocesses (or as whatever a ``shell`` mapper chooses), groupings and streams map
one to one, the per-component JSON config becomes the component config. Java objects are
reported: they need a Python or shell replacement.

>>> st = storm_thrift()
>>> shell = st.ComponentObject(shell=st.ShellComponent("python3", "split.py"))
>>> words = st.SpoutSpec(shell, st.ComponentCommon(
...     inputs={}, streams={"default": st.StreamInfo(["word"], False)}, json_conf="{}"))
>>> count = st.Bolt(shell, st.ComponentCommon(
...     inputs={st.GlobalStreamId("words", "default"): st.Grouping(fields=["word"])},
...     streams={}, parallelism_hint=2, json_conf='{"topology.tick.tuple.freq.secs": 5}'))
>>> plan = topology_to_plan(st.StormTopology({"words": words}, {"count": count}, {}), "wc")
>>> plan.component("count").inputs[0].grouping.name, plan.component("count").config
('FIELDS', {'topology.tick.tuple.freq.secs': 5})
>>> plan_to_topology(plan).bolts["count"].common.inputs == count.common.inputs
True
"""

from storm_compat.thrift._convert import (
    SERIALIZER_KEY,
    ObjectMapper,
    ShellCommand,
    ShellMapper,
    multilang_spec,
    plan_to_topology,
    read_topology,
    topology_to_plan,
    write_topology,
)
from storm_compat.thrift._module import storm_thrift

__all__ = [
    "SERIALIZER_KEY",
    "ObjectMapper",
    "ShellCommand",
    "ShellMapper",
    "multilang_spec",
    "plan_to_topology",
    "read_topology",
    "storm_thrift",
    "topology_to_plan",
    "write_topology",
]
