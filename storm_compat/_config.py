"""Storm's ``Config``: a dict of topology config with Storm's setters and key constants."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Config"]


class Config(dict[str, Any]):
    """Topology config: a ``dict`` with Storm's setters and ``TOPOLOGY_*`` key names.

    Keys are checked against the kernel's key registry when the topology is built: a
    misspelt ``topology.*`` key is an error, never ignored. Honoured: ``topology.workers``
    (containers), ``topology.acker.executors`` (0 = at-most-once), max spout pending, message
    timeout, tick tuple frequency, debug, max task parallelism and tasks. Kryo, event logger,
    stats sampling and worker heap keys are accepted with no effect.

    >>> conf = Config()
    >>> conf.setNumWorkers(2)
    >>> conf.setMaxSpoutPending(100)
    >>> conf[Config.TOPOLOGY_WORKERS], conf["topology.max.spout.pending"]
    (2, 100)
    """

    CLUSTER = "storm_compat.cluster"
    """The cluster ``StormSubmitter.submitTopology`` submits to (default ``"local"``); the
    cluster's own settings may sit in the same conf (for ``"spark"``:
    ``heron.scheduler.spark.master``, ``heron.statemgr.connection.string``, ...)."""

    TOPOLOGY_NAME = "topology.name"
    TOPOLOGY_DEBUG = "topology.debug"
    TOPOLOGY_WORKERS = "topology.workers"
    TOPOLOGY_TASKS = "topology.tasks"
    TOPOLOGY_ACKER_EXECUTORS = "topology.acker.executors"
    TOPOLOGY_EVENTLOGGER_EXECUTORS = "topology.eventlogger.executors"
    TOPOLOGY_MESSAGE_TIMEOUT_SECS = "topology.message.timeout.secs"
    TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS = "topology.enable.message.timeouts"
    TOPOLOGY_MAX_SPOUT_PENDING = "topology.max.spout.pending"
    TOPOLOGY_MAX_TASK_PARALLELISM = "topology.max.task.parallelism"
    TOPOLOGY_TICK_TUPLE_FREQ_SECS = "topology.tick.tuple.freq.secs"
    TOPOLOGY_ENVIRONMENT = "topology.environment"
    TOPOLOGY_MULTILANG_SERIALIZER = "topology.multilang.serializer"
    TOPOLOGY_SHELLBOLT_MAX_PENDING = "topology.shellbolt.max.pending"
    TOPOLOGY_SUBPROCESS_TIMEOUT_SECS = "topology.subprocess.timeout.secs"
    TOPOLOGY_SPOUT_WAIT_STRATEGY = "topology.spout.wait.strategy"
    TOPOLOGY_SLEEP_SPOUT_WAIT_STRATEGY_TIME_MS = "topology.sleep.spout.wait.strategy.time.ms"
    TOPOLOGY_STATS_SAMPLE_RATE = "topology.stats.sample.rate"
    TOPOLOGY_KRYO_REGISTER = "topology.kryo.register"
    TOPOLOGY_KRYO_FACTORY = "topology.kryo.factory"
    TOPOLOGY_SKIP_MISSING_KRYO_REGISTRATIONS = "topology.skip.missing.kryo.registrations"
    TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION = "topology.fall.back.on.java.serialization"
    TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB = "topology.worker.max.heap.size.mb"
    TOPOLOGY_WORKER_CHILDOPTS = "topology.worker.childopts"

    def setDebug(self, isOn: bool) -> None:
        """Log every emit, ack and fail."""
        self[self.TOPOLOGY_DEBUG] = isOn

    def setNumWorkers(self, workers: int) -> None:
        """The number of containers (one stream manager each)."""
        self[self.TOPOLOGY_WORKERS] = workers

    def setNumAckers(self, numExecutors: int) -> None:
        """0 turns tuple tracking off: spout tuples are acked as soon as they are emitted."""
        self[self.TOPOLOGY_ACKER_EXECUTORS] = numExecutors

    def setNumEventLoggers(self, numExecutors: int) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[self.TOPOLOGY_EVENTLOGGER_EXECUTORS] = numExecutors

    def setMessageTimeoutSecs(self, secs: int) -> None:
        """Seconds a tuple tree may take before its spout tuple is failed."""
        self[self.TOPOLOGY_MESSAGE_TIMEOUT_SECS] = secs

    def setMaxSpoutPending(self, max: int) -> None:
        """Most un-acked tuples per spout task."""
        self[self.TOPOLOGY_MAX_SPOUT_PENDING] = max

    def setMaxTaskParallelism(self, max: int) -> None:
        """Cap on every component's number of tasks."""
        self[self.TOPOLOGY_MAX_TASK_PARALLELISM] = max

    def setStatsSampleRate(self, rate: float) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[self.TOPOLOGY_STATS_SAMPLE_RATE] = rate

    def setFallBackOnJavaSerialization(self, fallback: bool) -> None:
        """Accepted for Storm compatibility; no effect (values are pickled)."""
        self[self.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION] = fallback

    def setSkipMissingKryoRegistrations(self, skip: bool) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[self.TOPOLOGY_SKIP_MISSING_KRYO_REGISTRATIONS] = skip

    def setKryoFactory(self, klass: type | str) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[self.TOPOLOGY_KRYO_FACTORY] = _class_name(klass)

    def registerSerialization(
        self, klass: type | str, serializerClass: type | str | None = None
    ) -> None:
        """Accepted for Storm compatibility; no effect (values are pickled)."""
        name = _class_name(klass)
        entry: str | dict[str, str] = (
            name if serializerClass is None else {name: _class_name(serializerClass)}
        )
        self[self.TOPOLOGY_KRYO_REGISTER] = [*self.get(self.TOPOLOGY_KRYO_REGISTER, []), entry]

    def setTopologyWorkerMaxHeapSize(self, size: float) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[self.TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB] = size

    def setEnvironment(self, env: Mapping[str, str]) -> None:
        """Environment variables added to every instance process."""
        self[self.TOPOLOGY_ENVIRONMENT] = dict(env)


def _class_name(klass: type | str) -> str:
    return klass if isinstance(klass, str) else f"{klass.__module__}.{klass.__qualname__}"
