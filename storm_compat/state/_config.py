"""The one place a Storm topology's config is mapped for its stateful bolts: Storm's
checkpoint interval (``topology.state.checkpoint.interval.ms``) onto the kernel's
``topology.stateful.checkpoint.interval.seconds``, and ``topology.reliability.mode``
``EFFECTIVELY_ONCE`` when a stateful bolt needs it. ``StormTopology.to_logical_plan`` (which
every Storm route, Flux and ``heron submit`` included, goes through) calls it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heron_core.errors import ConfigurationError

__all__ = [
    "CHECKPOINT_INTERVAL_MS",
    "DEFAULT_CHECKPOINT_INTERVAL_MS",
    "STATE_PROVIDER",
    "stateful_topology_config",
]

MODE = "topology.reliability.mode"
EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"
INTERVAL_SECONDS = "topology.stateful.checkpoint.interval.seconds"

CHECKPOINT_INTERVAL_MS = "topology.state.checkpoint.interval.ms"
"""Storm's key: milliseconds between checkpoints of a topology with stateful bolts."""
DEFAULT_CHECKPOINT_INTERVAL_MS = 1000
"""Storm's default of `CHECKPOINT_INTERVAL_MS`."""

STATE_PROVIDER = "topology.state.provider"
"""Storm's key naming the state's provider; only the in-memory one is built."""
STATE_PROVIDER_CONFIG = "topology.state.provider.config"
IN_MEMORY_PROVIDER = "org.apache.storm.state.InMemoryKeyValueStateProvider"


def stateful_topology_config(
    topology: str, config: Mapping[str, Any], stateful: Sequence[str]
) -> dict[str, Any]:
    """Topology ``config`` of topology ``topology`` whose stateful bolts are ``stateful``,
    with Storm's state keys mapped onto the kernel's.

    * ``topology.state.checkpoint.interval.ms`` (when set, or 1000 when a bolt is stateful
      and neither interval key is set) becomes ``topology.stateful.checkpoint.interval.seconds``
      (ms / 1000); Storm's key is removed (the kernel's registry does not know it);
    * with a stateful bolt, an unset ``topology.reliability.mode`` becomes
      ``EFFECTIVELY_ONCE`` (Storm's stateful bolts need checkpoints);
    * ``topology.state.provider`` may only name Storm's in-memory provider (removed, with its
      ``topology.state.provider.config``).

    >>> stateful_topology_config("wc", {}, ["count"])
    {'topology.stateful.checkpoint.interval.seconds': 1.0, 'topology.reliability.mode': \
'EFFECTIVELY_ONCE'}
    >>> stateful_topology_config("wc", {"topology.state.checkpoint.interval.ms": 250}, [])
    {'topology.stateful.checkpoint.interval.seconds': 0.25}

    Raises:
        ConfigurationError: a stateful bolt in a topology whose config sets another
            ``topology.reliability.mode``; an interval that is not a positive number of
            milliseconds, or that disagrees with the kernel's key also set; another state
            provider. The message names the topology, the key and (for the mode) the stateful
            components.
    """
    conf = dict(config)
    _check_provider(topology, conf)
    interval_ms = conf.pop(CHECKPOINT_INTERVAL_MS, None)
    if interval_ms is not None:
        seconds = _seconds(topology, interval_ms)
        if INTERVAL_SECONDS in conf and conf[INTERVAL_SECONDS] != seconds:
            raise ConfigurationError(
                f"topology {topology!r}: {CHECKPOINT_INTERVAL_MS!r} = {interval_ms!r} and "
                f"{INTERVAL_SECONDS!r} = {conf[INTERVAL_SECONDS]!r} disagree; set one of them"
            )
        conf[INTERVAL_SECONDS] = seconds
    elif stateful and INTERVAL_SECONDS not in conf:
        conf[INTERVAL_SECONDS] = DEFAULT_CHECKPOINT_INTERVAL_MS / 1000
    if stateful:
        mode = conf.get(MODE)
        if mode is None:
            conf[MODE] = EFFECTIVELY_ONCE
        elif mode != EFFECTIVELY_ONCE:
            names = ", ".join(repr(name) for name in stateful)
            noun = "component" if len(stateful) == 1 else "components"
            raise ConfigurationError(
                f"topology {topology!r}, {noun} {names}: a stateful bolt (IStatefulBolt) needs "
                f"checkpoints, which run in {MODE!r} {EFFECTIVELY_ONCE}, but the topology "
                f"config sets {MODE!r} = {mode!r}; leave the key unset or set it to "
                f"{EFFECTIVELY_ONCE!r}"
            )
    return conf


def _seconds(topology: str, interval_ms: Any) -> float:
    if isinstance(interval_ms, bool) or not isinstance(interval_ms, int | float):
        ms = None
    else:
        ms = interval_ms
    if ms is None or not ms > 0:
        raise ConfigurationError(
            f"topology {topology!r}: {CHECKPOINT_INTERVAL_MS!r} must be a positive number of "
            f"milliseconds, got {interval_ms!r}"
        )
    return ms / 1000


def _check_provider(topology: str, conf: dict[str, Any]) -> None:
    provider = conf.pop(STATE_PROVIDER, None)
    if provider is None:
        return
    if provider != IN_MEMORY_PROVIDER:
        raise ConfigurationError(
            f"topology {topology!r}: {STATE_PROVIDER!r} = {provider!r}: only Storm's "
            f"{IN_MEMORY_PROVIDER} is built; the runtime stores its checkpoints where "
            "'heron.statefulstorage.classname' says"
        )
    conf.pop(STATE_PROVIDER_CONFIG, None)
