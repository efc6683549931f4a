"""Storm's ``Config``: a dict of topology config with Storm's setters and key constants."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from heron_core.api._pickling import class_path

__all__ = ["Config"]


class Config(dict[str, Any]):
    """Topology config: a ``dict`` with Storm's setters and ``TOPOLOGY_*`` key names.

    Keys are checked against the kernel's key registry when the topology is built: a
    misspelt ``topology.*`` key is an error, never ignored. Honoured: ``topology.workers``
    (containers), ``topology.acker.executors`` (0 = at-most-once), max spout pending, message
    timeout (and whether timeouts apply), tick tuple frequency, debug, max task parallelism,
    tasks (per component), the environment of instance processes, multilang settings, the
    spout's sleep time, task hooks and the classes tuple values may hold
    (``registerSerialization``, ``topology.kryo.register``; with
    ``setFallBackOnJavaSerialization(True)`` any class). The Kryo factory, event logger, stats
    sampling and worker heap keys are accepted with no effect (named in a warning at submit).
    A Storm setter whose setting
    nothing here can honour (metrics consumers, event loggers, Kryo decorators, scheduling
    strategies and constraints, topology versions, the JVM classpath) raises
    ``NotImplementedError`` saying what to use instead.

    As in Storm, every setter also works on a plain ``dict``:
    ``Config.setNumWorkers(conf, 2)``.

    >>> conf = Config()
    >>> conf.setNumWorkers(2)
    >>> conf.setMaxSpoutPending(100)
    >>> conf[Config.TOPOLOGY_WORKERS], conf["topology.max.spout.pending"]
    (2, 100)
    >>> plain = {}
    >>> Config.setDebug(plain, True); plain
    {'topology.debug': True}
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
    TOPOLOGY_AUTO_TASK_HOOKS = "topology.auto.task.hooks"
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

    # --- honoured ------------------------------------------------------------------------------
    def setDebug(self, isOn: bool) -> None:
        """Log every emit, ack and fail."""
        self[Config.TOPOLOGY_DEBUG] = isOn

    def setNumWorkers(self, workers: int) -> None:
        """The number of containers (one stream manager each)."""
        self[Config.TOPOLOGY_WORKERS] = workers

    def setNumAckers(self, numExecutors: int) -> None:
        """0 turns tuple tracking off: spout tuples are acked as soon as they are emitted;
        any other number leaves it on (the stream managers track trees, not acker tasks)."""
        self[Config.TOPOLOGY_ACKER_EXECUTORS] = numExecutors

    def setMessageTimeoutSecs(self, secs: int) -> None:
        """Seconds a tuple tree may take before its spout tuple is failed."""
        self[Config.TOPOLOGY_MESSAGE_TIMEOUT_SECS] = secs

    def setEnableMessageTimeouts(self, enable: bool) -> None:
        """Whether trees that take longer than the message timeout fail (on by default)."""
        self[Config.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS] = enable

    def setMaxSpoutPending(self, max: int) -> None:
        """Most un-acked tuples per spout task."""
        self[Config.TOPOLOGY_MAX_SPOUT_PENDING] = max

    def setMaxTaskParallelism(self, max: int) -> None:
        """Cap on every component's number of tasks."""
        self[Config.TOPOLOGY_MAX_TASK_PARALLELISM] = max

    def setTickTupleFrequency(self, seconds: float) -> None:
        """Seconds between tick tuples sent to every bolt (Heron's setter; Storm sets the
        key)."""
        self[Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = seconds

    def setEnvironment(self, env: Mapping[str, str]) -> None:
        """Environment variables added to every instance process."""
        self[Config.TOPOLOGY_ENVIRONMENT] = dict(env)

    def setAutoTaskHooks(self, hooks: Iterable[type | str]) -> None:
        """Task hooks added to every task before it opens or prepares: ``ITaskHook``
        classes or their ``package.module.Class`` names (Heron's setter; Storm sets the
        key)."""
        self[Config.TOPOLOGY_AUTO_TASK_HOOKS] = [
            hook if isinstance(hook, str) else f"{hook.__module__}:{hook.__qualname__}"
            for hook in hooks
        ]

    def setMultilangSerializer(self, serializer: str) -> None:
        """The multilang codec of shell components (``json`` or ``msgpack``)."""
        self[Config.TOPOLOGY_MULTILANG_SERIALIZER] = serializer

    def setShellBoltMaxPending(self, max: int) -> None:
        """Most tuples a shell bolt's subprocess may hold unanswered."""
        self[Config.TOPOLOGY_SHELLBOLT_MAX_PENDING] = max

    def setSubprocessTimeoutSecs(self, secs: int) -> None:
        """Seconds a shell component's subprocess may go without a heartbeat."""
        self[Config.TOPOLOGY_SUBPROCESS_TIMEOUT_SECS] = secs

    def setSleepSpoutWaitStrategyTimeMs(self, ms: int) -> None:
        """Milliseconds an idle spout sleeps between ``nextTuple`` rounds."""
        self[Config.TOPOLOGY_SLEEP_SPOUT_WAIT_STRATEGY_TIME_MS] = ms

    # --- accepted with no effect (the registry names them at submit) -------------------------
    def setNumEventLoggers(self, numExecutors: int) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[Config.TOPOLOGY_EVENTLOGGER_EXECUTORS] = numExecutors

    def setStatsSampleRate(self, rate: float) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[Config.TOPOLOGY_STATS_SAMPLE_RATE] = rate

    def setKryoFactory(self, klass: type | str) -> None:
        """Accepted for Storm compatibility; no effect (no Kryo runs here)."""
        self[Config.TOPOLOGY_KRYO_FACTORY] = _class_name(klass)

    def setTopologyWorkerMaxHeapSize(self, size: float) -> None:
        """Accepted for Storm compatibility; no effect."""
        self[Config.TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB] = size

    # --- tuple values ------------------------------------------------------------------------
    def registerSerialization(
        self, klass: type | str, serializerClass: type | str | None = None
    ) -> None:
        """Let tuple values hold instances of ``klass`` (a class, or its
        ``package.module.Class`` path), as Storm registers it with Kryo: appended to
        ``topology.kryo.register``. Values of the builtin and standard value types (str,
        numbers, lists, dicts, datetime, Decimal, UUID, ...) need no registration; an
        unregistered class fails its emitter's batch with an error naming it. A
        ``serializerClass`` is kept in the entry, as Storm writes it, but not used: the
        class pickles itself.

        Raises:
            ValueError: ``klass`` is defined inside a function (instances cannot find it).
        """
        name = _class_name(klass)
        entry: str | dict[str, str] = (
            name if serializerClass is None else {name: _class_name(serializerClass)}
        )
        self[Config.TOPOLOGY_KRYO_REGISTER] = [
            *self.get(Config.TOPOLOGY_KRYO_REGISTER, []),
            entry,
        ]

    def setFallBackOnJavaSerialization(self, fallback: bool) -> None:
        """True: tuple values of any class are pickled, registered or not, and every
        instance unpickles whatever a peer sends (whoever holds the topology's key can then
        make its instances run code). False, the default as in Storm 2: only registered
        classes and the builtin and standard value types."""
        self[Config.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION] = fallback

    def setSkipMissingKryoRegistrations(self, skip: bool) -> None:
        """True: a ``registerSerialization`` class that does not import in an instance is
        skipped with a warning instead of failing the instance's start."""
        self[Config.TOPOLOGY_SKIP_MISSING_KRYO_REGISTRATIONS] = skip

    # --- not honoured: raise ---------------------------------------------------------------
    def registerMetricsConsumer(self, klass: type | str, *args: Any) -> None:
        """Raises NotImplementedError: metrics go to the metrics manager's sinks."""
        _refused(
            "registerMetricsConsumer",
            klass,
            "metrics go to the metrics manager's sinks: configure heron.metrics.sinks",
        )

    def registerEventLogger(self, klass: type | str, *args: Any) -> None:
        """Raises NotImplementedError: there is no event logger."""
        _refused("registerEventLogger", klass, "there is no event logger (topology.debug logs)")

    def registerDecorator(self, klass: type | str) -> None:
        """Raises NotImplementedError: values are pickled, not serialized with Kryo."""
        _refused("registerDecorator", klass, "values are pickled, there is no Kryo to decorate")

    def setClasspath(self, cp: str) -> None:
        """Raises NotImplementedError: no JVM runs here."""
        _refused("setClasspath", cp, "no JVM runs here; Python code ships in the code directory")

    def setTopologyVersion(self, version: str) -> None:
        """Raises NotImplementedError: topologies are not versioned."""
        _refused("setTopologyVersion", version, "topologies are not versioned here")

    def setTopologyStrategy(self, strategy: type | str) -> None:
        """Raises NotImplementedError: packing is chosen by heron.packing.algorithm."""
        _refused("setTopologyStrategy", strategy, "instances are packed by heron.packing.algorithm")

    def setTopologyPriority(self, priority: int) -> None:
        """Raises NotImplementedError: the schedulers have no priorities."""
        _refused("setTopologyPriority", priority, "the schedulers have no topology priorities")

    def setTopologyComponentWorkerConstraints(self, component1: str, component2: str) -> None:
        """Raises NotImplementedError: packing takes no placement constraints."""
        _refused(
            "setTopologyComponentWorkerConstraints",
            (component1, component2),
            "packing takes no placement constraints",
        )

    def setTopologyConstraintsMaxStateSearch(self, numStates: int) -> None:
        """Raises NotImplementedError: packing takes no placement constraints."""
        _refused(
            "setTopologyConstraintsMaxStateSearch",
            numStates,
            "packing takes no placement constraints",
        )


def _refused(setter: str, value: object, why: str) -> NoReturn:
    raise NotImplementedError(f"Config.{setter}({value!r}) cannot be honoured: {why}")


def _class_name(klass: type | str) -> str:
    """``klass``'s path as an instance process imports it (a class of the topology's script
    by the script's module name), or the path given."""
    return klass if isinstance(klass, str) else class_path(klass)
