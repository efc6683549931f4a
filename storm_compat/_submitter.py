"""``StormSubmitter``: submit a topology to a cluster, where it keeps running."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.client import submit
from storm_compat._code import load_storm_topology
from storm_compat._config import Config
from storm_compat.topology import StormTopology

__all__ = ["StormSubmitter"]


class StormSubmitter:
    """Submits topologies to a cluster (``Config.CLUSTER`` in the config, default
    ``"local"``), in the heron home of ``$HERON_HOME`` (default ``~/.herondata``)."""

    @staticmethod
    def submitTopology(
        name: str, stormConf: Mapping[str, Any] | None, topology: StormTopology
    ) -> None:
        """Submit ``topology`` as ``name`` with config ``stormConf``; return once its scheduler
        is up (the kernel's `heron_core.client.submit`). It runs until ``heron kill <cluster>
        <name>``.

        Raises:
            TopologyValidationError, ConfigurationError: a bad topology or config.
            PackingError: it does not fit the containers.
            SchedulerError: the name is taken on the cluster, or the scheduler did not start.
        """
        conf = dict(stormConf or {})
        cluster = str(conf.pop(Config.CLUSTER, "local"))
        submit(cluster, load_storm_topology(name, conf, topology))
