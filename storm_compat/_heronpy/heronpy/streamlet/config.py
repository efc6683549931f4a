"""``Config``: a Streamlet topology's config (heronpy's module path)."""

from __future__ import annotations

from typing import Any

from heron_core.api.constants import (
    TOPOLOGY_CONTAINER_CPU_REQUESTED,
    TOPOLOGY_CONTAINER_RAM_REQUESTED,
    TOPOLOGY_RELIABILITY_MODE,
    TOPOLOGY_STMGRS,
    TopologyReliabilityMode,
)
from heronpy.streamlet.resources import Resources

__all__ = ["Config"]

_MODES = {
    1: TopologyReliabilityMode.ATMOST_ONCE,
    2: TopologyReliabilityMode.ATLEAST_ONCE,
    3: TopologyReliabilityMode.EFFECTIVELY_ONCE,
}


class Config:
    """The topology config ``Runner.run`` submits: delivery semantics, containers, resources
    and user keys. Only the keys set here go to the topology; the rest keep their defaults.

    ``EFFECTIVELY_ONCE`` runs the topology with Heron's checkpoints: the generator and
    transform stages (and heronpy's windowed bolts) keep their state in what the context's
    ``get_state()`` returns, checkpointed every ``topology.stateful.checkpoint.interval.seconds``
    and rolled back after a failure. The Streamlet's own window, reduce and join stages keep
    their buffers in memory only.

    >>> config = Config()
    >>> config.set_delivery_semantics(Config.ATLEAST_ONCE)
    >>> config.set_num_containers(2)
    >>> config.set_user_config("my.threshold", 0.5)
    >>> sorted(config._api_config.items())
    [('my.threshold', 0.5), ('topology.reliability.mode', 'ATLEAST_ONCE'), ('topology.stmgrs', 2)]
    >>> config.set_delivery_semantics(7)
    Traceback (most recent call last):
    ...
    ValueError: unknown delivery semantics 7: use Config.ATMOST_ONCE (1), Config.ATLEAST_ONCE \
(2) or Config.EFFECTIVELY_ONCE (3)
    """

    ATMOST_ONCE = 1
    ATLEAST_ONCE = 2
    EFFECTIVELY_ONCE = 3

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        if config is not None and not isinstance(config, dict):
            raise TypeError(f"Config takes a dict of config keys, got {type(config).__name__}")
        self._api_config: dict[str, Any] = config if config is not None else {}

    def set_delivery_semantics(self, semantics: int) -> None:
        """Set ``topology.reliability.mode`` from ``ATMOST_ONCE``, ``ATLEAST_ONCE`` or
        ``EFFECTIVELY_ONCE``.

        Raises:
            ValueError: any other value.
        """
        mode = _MODES.get(semantics) if isinstance(semantics, int) else None
        if mode is None:
            raise ValueError(
                f"unknown delivery semantics {semantics!r}: use Config.ATMOST_ONCE (1), "
                "Config.ATLEAST_ONCE (2) or Config.EFFECTIVELY_ONCE (3)"
            )
        self._api_config[TOPOLOGY_RELIABILITY_MODE] = str(mode)

    def set_num_containers(self, ncontainers: int) -> None:
        """Set the number of containers (``topology.stmgrs``)."""
        self._api_config[TOPOLOGY_STMGRS] = int(ncontainers)

    def set_container_resources(self, resources: Resources) -> None:
        """Set each container's CPU and RAM (``topology.container.cpu`` / ``.ram``); a value
        left at 0 (not set) keeps the packing's own figure.

        Raises:
            TypeError: ``resources`` is not a `Resources`.
        """
        if not isinstance(resources, Resources):
            raise TypeError(
                f"container resources must be a Resources, got {type(resources).__name__}"
            )
        if resources.get_cpu():
            self._api_config[TOPOLOGY_CONTAINER_CPU_REQUESTED] = resources.get_cpu()
        if resources.get_ram():
            self._api_config[TOPOLOGY_CONTAINER_RAM_REQUESTED] = resources.get_ram()

    def set_user_config(self, key: str, value: Any) -> None:
        """Set any config key (components read it in their config)."""
        self._api_config[key] = value
