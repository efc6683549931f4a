"""``StormSubmitter``: submit a topology to a cluster, where it keeps running."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from heron_core.client import submit
from heron_core.config import load_cluster_config
from heron_core.errors import ConfigurationError
from storm_compat._code import load_storm_topology
from storm_compat._config import Config
from storm_compat._context import naming_where
from storm_compat.topology import StormTopology

__all__ = ["StormSubmitter"]

log = logging.getLogger(__name__)


class StormSubmitter:
    """Submits topologies to a heron cluster, in the heron home of ``$HERON_HOME`` (default
    ``~/.herondata``) with the cluster configs of ``$HERON_CONFIG_PATH`` (default: the
    built-in ``local``, ``localzk`` and ``spark``).

    The conf names the cluster (``Config.CLUSTER``, default ``"local"``) and may hold the
    cluster's own settings, as Storm's conf holds ``nimbus.seeds``: for ``spark``,
    ``heron.scheduler.spark.master`` (default ``local[2]``, Spark embedded in the scheduler
    on this machine), ``heron.statemgr.connection.string`` (the ZooKeeper every Spark host
    reaches; default ``127.0.0.1:2181``) and ``heron.scheduler.spark.conf.<property>``::

        conf = Config()
        conf[Config.CLUSTER] = "spark"
        conf["heron.scheduler.spark.master"] = "spark://master:7077"
        conf["heron.statemgr.connection.string"] = "zk1:2181,zk2:2181"
        StormSubmitter.submitTopology("wc", conf, builder.createTopology())

    ``heron kill spark wc --config-property heron.statemgr.connection.string=zk1:2181,...``
    ends it (or the same keys in a ``spark.yaml`` of ``$HERON_CONFIG_PATH``, for every verb).
    """

    @staticmethod
    def submitTopology(
        name: str, stormConf: Mapping[str, Any] | None, topology: StormTopology
    ) -> None:
        """Submit ``topology`` as ``name`` with config ``stormConf``; return once every
        container runs (the kernel's `heron_core.client.submit`; progress is logged at INFO
        by this module's logger). It runs until ``heron kill <cluster> <name>``.

        Raises:
            TopologyValidationError: a bad topology.
            ConfigurationError: a bad config, an unknown cluster or a bad cluster setting;
                the message names the topology and the conf key.
            StateManagerError: the cluster's state manager does not answer (the message
                names the topology and the key of its address).
            PackingError: it does not fit the containers.
            SchedulerError: the name is taken on the cluster, or the containers did not start
                (the scheduler's reason: too few Spark task slots, an unreachable master, ...).
        """
        conf = dict(stormConf or {})
        cluster = conf.pop(Config.CLUSTER, "local")
        key = f"conf[{Config.CLUSTER!r}]"
        if not isinstance(cluster, str) or not cluster.strip():
            raise ConfigurationError(
                f"topology {name!r}: {key}: expected the name of a heron cluster (local, "
                f"localzk, spark, or a <name>.yaml of $HERON_CONFIG_PATH), got {cluster!r}"
            )
        try:
            load_cluster_config(cluster)
        except ConfigurationError as exc:
            raise ConfigurationError(f"topology {name!r}: {key}: {exc}") from None
        where = f"the conf of StormSubmitter.submitTopology (cluster {cluster!r})"
        with naming_where(where, name):
            submit(cluster, load_storm_topology(name, conf, topology), progress=log.info)
