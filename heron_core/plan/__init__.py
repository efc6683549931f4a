"""The logical plan: a topology's components, streams, subscriptions and config.

It is the contract between every front end and the kernel; ``LogicalPlan.to_proto`` gives the
``topology_pb2.Topology`` message stored in the state manager.
"""

from heron_core.plan._logical import (
    ComponentDef,
    ConfigItems,
    GroupingKind,
    InputDef,
    LogicalPlan,
    PythonSpec,
    ShellSpec,
    StreamDef,
    TopologyState,
)

__all__ = [
    "ComponentDef",
    "ConfigItems",
    "GroupingKind",
    "InputDef",
    "LogicalPlan",
    "PythonSpec",
    "ShellSpec",
    "StreamDef",
    "TopologyState",
]
