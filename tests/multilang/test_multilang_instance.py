"""How an instance builds a plan's shell component: a ShellSpout or a ShellBolt."""

from __future__ import annotations

from heron_core.api import Bolt, Spout, TopologyBuilder, shell_component
from heron_core.instance._runtime import build_component
from heron_core.multilang import ShellBolt, ShellSpout
from heron_core.plan import ShellSpec
from heron_core.proto import topology_pb2


def test_build_component_makes_a_shell_spout_or_bolt_for_a_shell_spec() -> None:
    spec = topology_pb2.ComponentSpec(
        shell=topology_pb2.ShellComponent(command=["python3", "split.py"], serializer="msgpack")
    )
    bolt = build_component(spec, "topology 't', component 'split', task 1", is_spout=False)
    assert isinstance(bolt, ShellBolt) and not isinstance(bolt, Spout)
    spout = build_component(spec, "topology 't', component 'split', task 1", is_spout=True)
    assert isinstance(spout, ShellSpout) and not isinstance(spout, Bolt)
    unset = topology_pb2.ComponentSpec(shell=topology_pb2.ShellComponent(command=["x"]))
    assert isinstance(build_component(unset, "w", is_spout=False), ShellBolt)


def test_native_shell_components_are_declared_like_any_component() -> None:
    builder = TopologyBuilder("native")
    words = builder.add_spout("words", ShellSpout(["python3", "w.py"], outputs=["word"]))
    split = ShellBolt(["python3", "s.py"], "msgpack", outputs=["part"])
    builder.add_bolt("split", split, inputs=[words])
    builder.add_bolt("tail", shell_component(["python3", "t.py"], []), inputs=[words])
    plan = builder.build()
    assert [s.fields for c in plan.components for s in c.outputs] == [("word",), ("part",)]
    assert plan.component("tail").spec == ShellSpec(("python3", "t.py"))
