"""The exception hierarchy: one root, one subclass per failure mode.

Every message names what the user can act on: the topology, the component, the task, the
config key or the file, what was expected and what was found.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "EmitTypeError",
    "HeronError",
    "PackingError",
    "SchedulerError",
    "StateManagerError",
    "TopologyValidationError",
    "UserCodeError",
]


class HeronError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigurationError(HeronError):
    """A config key is unknown, has the wrong type or a bad value, or a plug-in name is wrong."""


class TopologyValidationError(HeronError):
    """A topology definition is not a valid DAG of spouts and bolts.

    Attributes:
        topology: the topology's name.
        component: the offending component's name, or None when the whole topology is at fault.
    """

    def __init__(self, topology: str, component: str | None, message: str) -> None:
        self.topology = topology
        self.component = component
        where = f"topology {topology!r}"
        if component is not None:
            where += f", component {component!r}"
        super().__init__(f"{where}: {message}")


class PackingError(HeronError):
    """Instances cannot be placed into containers under the configured limits."""


class StateManagerError(HeronError):
    """The state manager cannot be reached, or a node is missing or already exists."""


class SchedulerError(HeronError):
    """The scheduler cannot start, find or stop a topology's containers."""


class UserCodeError(HeronError):
    """User code (a spout, bolt or grouping) raised; the original exception is chained."""


class EmitTypeError(UserCodeError, TypeError):
    """A component emitted values that are not a list or tuple (a ``TypeError`` too, as
    pystorm and Storm's multilang raise)."""


def shown(value: object, limit: int = 200) -> str:
    """``repr(value)`` for an error message, cut at ``limit`` characters.

    >>> shown(["a" * 10], limit=12)
    "['aaaaaaa..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
