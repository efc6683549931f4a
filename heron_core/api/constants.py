"""Names users type: topology config keys (heronpy's ``api_constants``) and system names.

>>> TOPOLOGY_MAX_SPOUT_PENDING
'topology.max.spout.pending'
>>> TopologyReliabilityMode.ATLEAST_ONCE == "ATLEAST_ONCE"
True
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "DEFAULT_STREAM",
    "SYSTEM_COMPONENT",
    "TICK_STREAM",
    "TOPOLOGY_ADDITIONAL_CLASSPATH",
    "TOPOLOGY_AUTO_TASK_HOOKS",
    "TOPOLOGY_CAP_TICKET",
    "TOPOLOGY_COMPONENT_CPUMAP",
    "TOPOLOGY_COMPONENT_DISKMAP",
    "TOPOLOGY_COMPONENT_JVMOPTS",
    "TOPOLOGY_COMPONENT_OUTPUT_BPS",
    "TOPOLOGY_COMPONENT_PARALLELISM",
    "TOPOLOGY_COMPONENT_RAMMAP",
    "TOPOLOGY_CONTAINER_CPU_REQUESTED",
    "TOPOLOGY_CONTAINER_DISK_REQUESTED",
    "TOPOLOGY_CONTAINER_MAX_CPU_HINT",
    "TOPOLOGY_CONTAINER_MAX_DISK_HINT",
    "TOPOLOGY_CONTAINER_MAX_RAM_HINT",
    "TOPOLOGY_CONTAINER_PADDING_PERCENTAGE",
    "TOPOLOGY_CONTAINER_RAM_PADDING",
    "TOPOLOGY_CONTAINER_RAM_REQUESTED",
    "TOPOLOGY_DEBUG",
    "TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS",
    "TOPOLOGY_MAX_SPOUT_PENDING",
    "TOPOLOGY_MESSAGE_TIMEOUT_SECS",
    "TOPOLOGY_NAME",
    "TOPOLOGY_PROJECT_NAME",
    "TOPOLOGY_RELIABILITY_MODE",
    "TOPOLOGY_SERIALIZER_CLASSNAME",
    "TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS",
    "TOPOLOGY_STATEFUL_START_CLEAN",
    "TOPOLOGY_STMGRS",
    "TOPOLOGY_TEAM_EMAIL",
    "TOPOLOGY_TEAM_NAME",
    "TOPOLOGY_TICK_TUPLE_FREQ_SECS",
    "TOPOLOGY_WORKER_CHILDOPTS",
    "TopologyReliabilityMode",
]

DEFAULT_STREAM: Final = "default"
"""The stream a component emits on when it names none (Final: the compiled hot path reads it
as a C constant, not from a module's globals)."""
SYSTEM_COMPONENT = "__system"
"""The source component of tick tuples."""
TICK_STREAM = "__tick"
"""The stream of tick tuples (``topology.tick.tuple.freq.secs``)."""


class TopologyReliabilityMode(enum.StrEnum):
    """Values of ``topology.reliability.mode``."""

    ATMOST_ONCE = "ATMOST_ONCE"
    ATLEAST_ONCE = "ATLEAST_ONCE"
    EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"


TOPOLOGY_WORKER_CHILDOPTS = "topology.worker.childopts"
TOPOLOGY_COMPONENT_JVMOPTS = "topology.component.jvmopts"
TOPOLOGY_TICK_TUPLE_FREQ_SECS = "topology.tick.tuple.freq.secs"
TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS = "topology.enable.message.timeouts"
TOPOLOGY_DEBUG = "topology.debug"
TOPOLOGY_STMGRS = "topology.stmgrs"
TOPOLOGY_MESSAGE_TIMEOUT_SECS = "topology.message.timeout.secs"
TOPOLOGY_COMPONENT_PARALLELISM = "topology.component.parallelism"
TOPOLOGY_MAX_SPOUT_PENDING = "topology.max.spout.pending"
TOPOLOGY_AUTO_TASK_HOOKS = "topology.auto.task.hooks"
TOPOLOGY_SERIALIZER_CLASSNAME = "topology.serializer.classname"
TOPOLOGY_RELIABILITY_MODE = "topology.reliability.mode"
TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS = "topology.stateful.checkpoint.interval.seconds"
TOPOLOGY_STATEFUL_START_CLEAN = "topology.stateful.start.clean"
TOPOLOGY_CONTAINER_CPU_REQUESTED = "topology.container.cpu"
TOPOLOGY_CONTAINER_RAM_REQUESTED = "topology.container.ram"
TOPOLOGY_CONTAINER_DISK_REQUESTED = "topology.container.disk"
TOPOLOGY_CONTAINER_MAX_RAM_HINT = "topology.container.max.ram.hint"
TOPOLOGY_CONTAINER_MAX_CPU_HINT = "topology.container.max.cpu.hint"
TOPOLOGY_CONTAINER_MAX_DISK_HINT = "topology.container.max.disk.hint"
TOPOLOGY_CONTAINER_PADDING_PERCENTAGE = "topology.container.padding.percentage"
TOPOLOGY_CONTAINER_RAM_PADDING = "topology.container.ram.padding"
TOPOLOGY_COMPONENT_CPUMAP = "topology.component.cpumap"
TOPOLOGY_COMPONENT_RAMMAP = "topology.component.rammap"
TOPOLOGY_COMPONENT_DISKMAP = "topology.component.diskmap"
TOPOLOGY_NAME = "topology.name"
TOPOLOGY_TEAM_NAME = "topology.team.name"
TOPOLOGY_TEAM_EMAIL = "topology.team.email"
TOPOLOGY_CAP_TICKET = "topology.cap.ticket"
TOPOLOGY_PROJECT_NAME = "topology.project.name"
TOPOLOGY_ADDITIONAL_CLASSPATH = "topology.additional.classpath"
TOPOLOGY_COMPONENT_OUTPUT_BPS = "topology.component.output.bps"
