"""The table of every registered config key. Add new keys here, in the section they belong to.

Each entry is ``Key(name, type, default, doc, ...)``; see `Key` for the optional fields
(``nullable``, ``choices``, ``minimum``, ``maximum``, ``exclusive_minimum``, ``aliases``).
Rules that tie two keys together go in ``_ORDERINGS``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from heron_core.config._registry import Key, KeyPrefix, Ordering, Registry

__all__ = ["REGISTRY", "SPARK_CONF_PREFIX"]

MiB = 1 << 20
GiB = 1 << 30

METRICS_SINKS = yaml.safe_load((Path(__file__).parent / "metrics_sinks.yaml").read_text())
"""The default of ``heron.metrics.sinks``: ``metrics_sinks.yaml`` beside this module."""

RELIABILITY_MODES = ("ATMOST_ONCE", "ATLEAST_ONCE", "EFFECTIVELY_ONCE")

_KEYS = (
    # --- topology: identity and metadata ------------------------------------------------------
    Key("topology.name", str, "", "Name of the topology (set at submit)."),
    Key("topology.team.name", str, "", "Team owning the topology (metadata)."),
    Key("topology.team.email", str, "", "Contact e-mail of the owning team (metadata)."),
    Key("topology.cap.ticket", str, "", "Capacity ticket approving the topology (metadata)."),
    Key("topology.project.name", str, "", "Project the topology belongs to (metadata)."),
    Key("topology.debug", bool, False, "Log every emit, ack and fail."),
    # --- topology: reliability -----------------------------------------------------------------
    Key(
        "topology.reliability.mode",
        str,
        "ATLEAST_ONCE",
        "Delivery semantics: ATMOST_ONCE, ATLEAST_ONCE (XOR acking) or EFFECTIVELY_ONCE.",
        choices=RELIABILITY_MODES,
    ),
    Key(
        "topology.acker.executors",
        int,
        None,
        "Storm's acker count; 0 turns acking off (at-most-once), None leaves it on.",
        nullable=True,
        minimum=0,
    ),
    Key(
        "topology.message.timeout.secs",
        int,
        30,
        "Seconds a tuple tree may take to complete before its spout tuple is failed.",
        minimum=1,
    ),
    Key(
        "topology.enable.message.timeouts",
        bool,
        True,
        "Fail spout tuples whose tree did not complete within the message timeout.",
    ),
    Key(
        "topology.max.spout.pending",
        int,
        None,
        "Most un-acked tuples per spout task while acking is on; None = unlimited (Storm).",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.tick.tuple.freq.secs",
        float,
        None,
        "Seconds between tick tuples sent to bolts; None = no tick tuples.",
        nullable=True,
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "topology.stateful.checkpoint.interval.seconds",
        float,
        5.0,
        "Seconds between checkpoints in EFFECTIVELY_ONCE mode (the topology manager starts "
        "one at the spouts every interval).",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "topology.stateful.start.clean",
        bool,
        False,
        "In EFFECTIVELY_ONCE mode, the topology manager starts from empty state instead of the "
        "newest consistent checkpoint when it starts (it still rolls back to checkpoints it "
        "made itself).",
    ),
    # --- topology: parallelism and resources ----------------------------------------------------
    Key(
        "topology.stmgrs",
        int,
        1,
        "Number of containers (one Stream Manager each).",
        minimum=1,
        aliases=("topology.workers",),
    ),
    Key(
        "topology.component.parallelism",
        int,
        1,
        "Instances (tasks) of a component.",
        minimum=1,
        refused=(
            "a component's parallelism is given where it is declared (the parallelism hint of "
            "add_spout/add_bolt, setSpout/setBolt, a Flux parallelism or a streamparse par=)"
        ),
    ),
    Key(
        "topology.component.cpu",
        float,
        1.0,
        "CPU cores per instance.",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key("topology.component.ram", int, GiB, "RAM bytes per instance.", minimum=16 * MiB),
    Key("topology.component.disk", int, GiB, "Disk bytes per instance.", minimum=0),
    Key(
        "topology.component.cpumap",
        str,
        "",
        "Per-component CPU cores, 'component:cores,...' (heronpy).",
        refused=(
            "per-component resources go in each component's own config (topology.component.cpu, "
            ".ram, .disk)"
        ),
    ),
    Key(
        "topology.component.rammap",
        str,
        "",
        "Per-component RAM bytes, 'component:bytes,...' (heronpy).",
        refused=(
            "per-component resources go in each component's own config (topology.component.cpu, "
            ".ram, .disk)"
        ),
    ),
    Key(
        "topology.component.diskmap",
        str,
        "",
        "Per-component disk bytes, 'component:bytes,...' (heronpy).",
        refused=(
            "per-component resources go in each component's own config (topology.component.cpu, "
            ".ram, .disk)"
        ),
    ),
    Key(
        "topology.component.output.bps",
        int,
        None,
        "Bytes per second a component may emit; None = unlimited.",
        nullable=True,
        minimum=1,
        refused="limiting the rate of a component's output is not built",
    ),
    Key(
        "topology.container.cpu",
        float,
        None,
        "CPU cores per container; None = derived from its instances.",
        nullable=True,
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "topology.container.ram",
        int,
        None,
        "RAM bytes per container; None = derived from its instances.",
        nullable=True,
        minimum=0,
    ),
    Key(
        "topology.container.disk",
        int,
        None,
        "Disk bytes per container; None = derived from its instances.",
        nullable=True,
        minimum=0,
    ),
    Key(
        "topology.container.max.cpu.hint",
        float,
        None,
        "Upper bound on CPU cores per container (heronpy).",
        nullable=True,
        minimum=0,
        exclusive_minimum=True,
        refused="the packing takes the container size from topology.container.cpu",
    ),
    Key(
        "topology.container.max.ram.hint",
        int,
        None,
        "Upper bound on RAM bytes per container (heronpy).",
        nullable=True,
        minimum=0,
        refused="the packing takes the container size from topology.container.ram",
    ),
    Key(
        "topology.container.max.disk.hint",
        int,
        None,
        "Upper bound on disk bytes per container (heronpy).",
        nullable=True,
        minimum=0,
        refused="the packing takes the container size from topology.container.disk",
    ),
    Key(
        "topology.container.max.instances",
        int,
        10,
        "Most instances one container holds (first-fit-decreasing packing).",
        minimum=1,
    ),
    Key(
        "topology.container.padding.percentage",
        int,
        10,
        "Per-container padding as a percentage of its capacity.",
        minimum=0,
        maximum=100,
    ),
    Key(
        "topology.container.cpu.padding",
        float,
        1.0,
        "CPU cores per container reserved for its daemons.",
        minimum=0,
    ),
    Key(
        "topology.container.ram.padding",
        int,
        GiB,
        "RAM bytes per container reserved for its daemons.",
        minimum=0,
    ),
    Key(
        "topology.container.disk.padding",
        int,
        GiB,
        "Disk bytes per container reserved for its daemons.",
        minimum=0,
    ),
    Key(
        "topology.packing.ffd.sorting.strategy",
        str,
        "RAM_FIRST",
        "Order in which first-fit-decreasing packing places components.",
        choices=("RAM_FIRST", "CPU_FIRST"),
    ),
    # --- topology: user code and processes -----------------------------------------------------
    Key(
        "topology.serializer.classname",
        str,
        "pickle",
        "Serializer of tuple values: 'pickle' or a 'package.module:Class' path.",
        refused=(
            "tuple values are pickled (multilang components: topology.multilang.serializer); "
            "other serializers are not built"
        ),
    ),
    Key(
        "topology.multilang.serializer",
        str,
        "json",
        "Wire format of Storm multilang components.",
        choices=("json", "msgpack"),
    ),
    Key(
        "topology.subprocess.timeout.secs",
        int,
        30,
        "Seconds a multilang subprocess may stay silent before it is considered dead.",
        minimum=1,
    ),
    Key(
        "topology.sleep.spout.wait.strategy.time.ms",
        int,
        1,
        "Milliseconds a spout sleeps after a next_tuple call that emitted nothing.",
        minimum=0,
    ),
    Key(
        "topology.environment",
        dict,
        {},
        "Environment variables added to every instance process.",
    ),
    Key(
        "topology.worker.childopts",
        str,
        "",
        "Extra options for worker processes (Storm; kept for compatibility).",
        inert="no JVM runs here",
    ),
    Key(
        "topology.component.jvmopts",
        str,
        "",
        "JVM options per component (heronpy; no JVM here, kept for compatibility).",
        inert="no JVM runs here",
    ),
    Key(
        "topology.additional.classpath",
        str,
        "",
        "Extra JVM classpath (heronpy; no JVM here, kept for compatibility).",
        inert="no JVM runs here",
    ),
    Key(
        "topology.auto.task.hooks",
        list,
        [],
        "Task hooks attached to every task: 'package.module:Class' (or Storm's "
        "'package.module.Class') of a heron_core.api.hooks.TaskHook, a heronpy ITaskHook or a "
        "Storm ITaskHook, built with no arguments in each task before it is initialized.",
    ),
    # --- topology: Storm keys (set by storm_compat.Config and the declarers) -------------------
    Key(
        "topology.tasks",
        int,
        None,
        "Tasks of a component (Storm's setNumTasks); the Storm facade makes it the parallelism.",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.max.task.parallelism",
        int,
        None,
        "Most tasks per component; the Storm facade caps each component's parallelism with it.",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.eventlogger.executors",
        int,
        None,
        "Storm's event logger tasks.",
        nullable=True,
        minimum=0,
        inert="Storm's event logger is not built; nothing is logged to it",
    ),
    Key(
        "topology.spout.wait.strategy",
        str,
        "",
        "Storm's idle spout back-off class (see topology.sleep.spout.wait.strategy.time.ms).",
        inert=(
            "it names a Java class; an idle spout sleeps "
            "topology.sleep.spout.wait.strategy.time.ms instead"
        ),
    ),
    Key(
        "topology.shellbolt.max.pending",
        int,
        100,
        "Storm's bound on tuples in flight to a ShellBolt's subprocess: the host writes a "
        "batch's inputs in chunks of half of it, each ended by a heartbeat, and waits for the "
        "oldest chunk's sync before the inputs in flight would exceed it.",
        minimum=1,
    ),
    Key(
        "topology.stats.sample.rate",
        float,
        0.05,
        "Storm's metrics sampling rate (every tuple is counted).",
        minimum=0,
        maximum=1,
        inert="every tuple is counted",
    ),
    Key(
        "topology.kryo.register",
        list,
        [],
        "Classes tuple values may hold beyond the builtin types and the standard value types "
        "(datetime, Decimal, UUID, Fraction, collections' containers): 'package.module.Class' "
        "(or 'package.module:Class') paths, or maps whose keys are such paths (their values, "
        "Storm serializer classes, are not used); the topology's and every component's lists "
        "hold for the whole topology. A value of another class stops its batch at the emitter "
        "with an error naming it, and a receiver unpickles no other class.",
    ),
    Key(
        "topology.kryo.factory",
        str,
        "",
        "Storm's Kryo factory class.",
        inert="tuple values are pickled; no Kryo or Java serialization runs here",
    ),
    Key(
        "topology.skip.missing.kryo.registrations",
        bool,
        False,
        "Skip, with a warning, a topology.kryo.register entry that does not import, instead "
        "of failing the instance's start (for the whole topology).",
    ),
    Key(
        "topology.fall.back.on.java.serialization",
        bool,
        False,
        "Pickle and unpickle tuple values of any class, registered or not (for the whole "
        "topology): whoever holds the topology's key can then make its instances run code.",
    ),
    Key(
        "topology.worker.max.heap.size.mb",
        float,
        None,
        "Storm's worker heap cap.",
        nullable=True,
        minimum=0,
        exclusive_minimum=True,
        inert="no JVM runs here",
    ),
    # --- heron: plug-ins ------------------------------------------------------------------------
    Key(
        "heron.class.packing.algorithm",
        str,
        "round_robin",
        "Packing plug-in: a built-in short name or 'package.module:Class'.",
    ),
    Key(
        "heron.class.state.manager",
        str,
        "localfs",
        "State manager plug-in: a built-in short name or 'package.module:Class'.",
    ),
    Key(
        "heron.class.scheduler",
        str,
        "local",
        "Scheduler plug-in: a built-in short name or 'package.module:Class'.",
    ),
    # --- heron: state manager --------------------------------------------------------------------
    Key(
        "heron.statemgr.connection.string",
        str,
        "",
        "Where the state manager lives (e.g. ZooKeeper 'host:port,...').",
    ),
    Key(
        "heron.statemgr.root.path",
        str,
        "~/.herondata/repository/state",
        "Root of the state manager's tree: a directory for the local file system state "
        "manager (this default), a ZooKeeper path for the ZooKeeper one (/heron when the key is "
        "not set, as Heron's zookeeper statemgr.yaml).",
    ),
    Key(
        "heron.statemgr.zookeeper.session.timeout.ms",
        int,
        30000,
        "ZooKeeper session timeout in milliseconds.",
        minimum=1,
    ),
    Key(
        "heron.statemgr.zookeeper.connection.timeout.ms",
        int,
        10000,
        "Milliseconds to wait for a ZooKeeper connection.",
        minimum=1,
    ),
    Key(
        "heron.statemgr.zookeeper.auth.file",
        str,
        "",
        "Absolute path of an owner-only file holding 'user:password': ZooKeeper digest login "
        "and an ACL for that user alone on every node ('' = no login, open ACL).",
    ),
    # --- heron: scheduler and executor ----------------------------------------------------------
    Key(
        "heron.directory.home",
        str,
        "~/.herondata",
        "Directory under which topologies' working directories live.",
    ),
    Key(
        "heron.scheduler.startup.timeout.secs",
        float,
        180.0,
        "Seconds heron submit waits for every container to run (the physical plan written) "
        "before it gives up and undoes the submission.",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.scheduler.spark.master",
        str,
        "local[2]",
        "Spark master of the spark scheduler: local[N] (embedded, N task slots), "
        "spark://host:port (standalone), or any other master URL Spark takes (yarn, "
        "k8s://..., passed through untested).",
    ),
    Key(
        "heron.scheduler.spark.slots.timeout.secs",
        float,
        60.0,
        "Longest wait of the spark scheduler for executors to register a task slot for every "
        "container. Unless a standalone master's state showed free cores for every container, "
        "it gives up earlier once some registered and their count stopped growing (for 10 s, "
        "or as long as the first executor took to register if that was longer).",
        minimum=0,
    ),
    Key(
        "heron.scheduler.spark.container.cpus",
        str,
        "slot",
        "What each container's Spark task reserves: 'slot' (spark.task.cpus, one task slot "
        "per container) or 'packing' (spark.task.cpus raised to the largest container's CPU "
        "in the packing plan, rounded up).",
        choices=("slot", "packing"),
    ),
    Key(
        "heron.scheduler.spark.auth.secret.file",
        str,
        "",
        "Absolute path of an owner-only file holding the shared secret of the Spark cluster "
        "(the spark.authenticate.secret its master and workers run with), one line; required "
        "for a spark:// master, read by the scheduler service alone ('' = none).",
    ),
    Key(
        "heron.scheduler.spark.allow.unauthenticated",
        bool,
        False,
        "Run the Spark application without Spark's authentication or RPC encryption when "
        "no secret is set or the config turns them off: whoever reaches the driver's port "
        "can then fetch the container package and the topology's key pair in it; a warning "
        "at every start.",
    ),
    Key(
        "heron.executor.restart.backoff.initial.secs",
        float,
        1.0,
        "Seconds before the first restart of a dead process.",
        minimum=0,
    ),
    Key(
        "heron.executor.restart.backoff.max.secs",
        float,
        30.0,
        "Longest wait between restarts of a process.",
        minimum=0,
    ),
    Key(
        "heron.executor.restart.max.attempts",
        int,
        150,
        "Restarts of one process before its executor gives up.",
        minimum=0,
    ),
    Key(
        "heron.executor.stop.grace.secs",
        float,
        10.0,
        "Seconds a process of the topology gets between SIGTERM and SIGKILL when its executor "
        "stops it (schedulers give the executors this plus 5 s).",
        minimum=0,
        exclusive_minimum=True,
    ),
    # --- heron: instance --------------------------------------------------------------------------
    Key(
        "heron.instance.batch.max.tuples",
        int,
        1024,
        "Tuples per outgoing batch before it is flushed (fewer while the batches pass "
        "heron.instance.batch.max.bytes). Larger batches raise the peak rate of small tuples "
        "with acking off (4096: about 12% on the benchmark's word count; 8192 no more), not "
        "with acking on, and hold a bolt's output longer while it catches up after a stall, "
        "which raises the complete latency at moderate rates.",
        minimum=1,
    ),
    Key(
        "heron.instance.batch.flush.interval.ms",
        float,
        10.0,
        "Milliseconds after which a partly filled outgoing batch is flushed (Heron's "
        "heron.instance.emit.batch.time.ms, Storm's flush interval): however long each "
        "next_tuple or process call takes, once this interval has passed the instance sends "
        "what was emitted and serves acks, timeouts, ticks, metrics and stop requests before "
        "it calls user code again. 0 does so after every call.",
        minimum=0,
    ),
    Key(
        "heron.instance.batch.linger.ms",
        float,
        1.0,
        "When an instance runs out of work (a bolt's input is drained, a spout's next_tuple "
        "emitted nothing), it flushes its batches if the last flush is at least this many "
        "milliseconds old, else at that age: small batches at moderate rates cost far more CPU "
        "per tuple, and this bounds how small they get. 0 flushes at once.",
        minimum=0,
    ),
    Key(
        "heron.instance.gc.threshold",
        int,
        20000,
        "The instance process's first garbage-collector threshold (Python's default is 700): "
        "the collector runs when this many more container objects were allocated than freed. "
        "Objects that exist once the component is initialized are frozen out of collections "
        "(gc.freeze). At 700, collections cost a tenth of a bolt's CPU at peak rates and "
        "pause it for tens of milliseconds; a higher value defers cycles of user objects. "
        "0 disables automatic collection.",
        minimum=0,
    ),
    Key(
        "heron.instance.acknowledgement.nbuckets",
        int,
        10,
        "Buckets of the spout's timeout scan (scan period = timeout / nbuckets).",
        minimum=1,
    ),
    # --- heron: stream manager and topology manager --------------------------------------------
    Key(
        "heron.streammgr.network.backpressure.highwatermark.mb",
        int,
        8,
        "Queued MB towards an instance or peer at which back pressure starts (Heron's 100 MB "
        "is sized for C++ daemons; Python tuples cost several times their wire size).",
        minimum=1,
    ),
    Key(
        "heron.streammgr.network.backpressure.lowwatermark.mb",
        int,
        4,
        "Queued MB below which back pressure is relieved (must be < high watermark).",
        minimum=0,
    ),
    Key(
        "heron.streammgr.xormgr.rotatingmap.nbuckets",
        int,
        3,
        "Buckets of the rotating map that expires tuple trees (at least 2).",
        minimum=2,
    ),
    Key(
        "heron.streammgr.stateful.buffer.size.mb",
        float,
        100.0,
        "EFFECTIVELY_ONCE: megabytes of tuples a stream manager holds back for one local task "
        "while it waits for the checkpoint markers of the task's other inputs; past it, that "
        "checkpoint is given up for the task (it will not complete; the next one can).",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.statefulstorage.classname",
        str,
        "localfs",
        "EFFECTIVELY_ONCE: where checkpointed state is stored, a built-in short name (localfs) "
        "or 'package.module:Class' (a heron_core.ckptmgr.StateStore).",
    ),
    Key(
        "heron.statefulstorage.localfs.root.path",
        str,
        "",
        "Directory the localfs store keeps checkpoints in ('' = <heron.directory.home>/"
        "checkpoints). Past one machine name a directory every host mounts (NFS, a mounted HDFS).",
    ),
    Key(
        "heron.statefulstorage.max.checkpoints",
        int,
        2,
        "Consistent checkpoints each store keeps per task (older ones are deleted).",
        minimum=1,
    ),
    Key(
        "heron.streammgr.tmanager.heartbeat.interval.sec",
        float,
        10.0,
        "Seconds between Stream Manager heartbeats to the Topology Manager.",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.tmanager.stmgr.state.timeout.sec",
        float,
        60.0,
        "Seconds without a heartbeat after which a Stream Manager counts as gone.",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.tmanager.metrics.collector.maximum.interval.min",
        int,
        180,
        "Minutes of per-minute metric buckets the Topology Manager's metrics cache keeps "
        "(older buckets are purged; all-time values are kept).",
        minimum=1,
    ),
    Key(
        "heron.tmanager.metrics.collector.maximum.exception",
        int,
        256,
        "Entries of the Topology Manager's exception log (one per instance and stack trace); "
        "beyond it the entry seen longest ago is dropped.",
        minimum=1,
    ),
    Key(
        "heron.tmanager.metrics.collector.maximum.metrics",
        int,
        50_000,
        "Most (instance, metric name) series the Topology Manager's metrics cache holds, "
        "bounding its memory; metrics with new names beyond it are dropped with a warning.",
        minimum=1,
    ),
    Key(
        "heron.network.curve.enabled",
        bool,
        True,
        "Authenticate and encrypt every TCP socket of the daemons (stream managers' data, the "
        "topology manager's control and stats ports) with CurveZMQ and the topology's key pair, "
        "made at submit. False leaves them open to any process that reaches the port "
        "(benchmarks only; every daemon logs a warning).",
    ),
    # --- heron: metrics -------------------------------------------------------------------------
    Key(
        "heron.metrics.export.interval.sec",
        float,
        1.0,
        "Seconds between metric publications by each instance and stream manager.",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.instance.metrics.system.sample.interval.sec",
        float,
        10.0,
        "Seconds between samples of each instance's process metrics (__py-user-cpu-time-secs, "
        "__py-sys-cpu-time-secs, __py-physical-memory-byte).",
        minimum=0,
        exclusive_minimum=True,
    ),
    Key(
        "heron.metrics.sinks",
        dict,
        METRICS_SINKS,
        "The sinks of every container's metrics manager, shaped as Heron's metrics_sinks.yaml "
        "(default: heron_core/config/metrics_sinks.yaml); checked at submit.",
    ),
    # --- topology: windowed bolts (Storm's BaseWindowedBolt builder methods set these) -------
    Key(
        "topology.bolts.window.length.count",
        int,
        None,
        "A windowed bolt's window holds its last this many tuples (withWindow(Count)).",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.bolts.window.length.duration.ms",
        int,
        None,
        "A windowed bolt's window holds the tuples of this many ms (withWindow(Duration)).",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.bolts.window.sliding.interval.count",
        int,
        None,
        "A windowed bolt's window fires every this many tuples; None = 1 unless sliding by "
        "duration.",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.bolts.window.sliding.interval.duration.ms",
        int,
        None,
        "A windowed bolt's window fires every this many ms.",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.bolts.tuple.timestamp.field.name",
        str,
        None,
        "Event time: the input field holding each tuple's timestamp in ms (withTimestampField).",
        nullable=True,
    ),
    Key(
        "topology.bolts.tuple.timestamp.max.lag.ms",
        int,
        None,
        "Event time: how far out of order timestamps may arrive, ms (withLag); None = 0.",
        nullable=True,
        minimum=0,
    ),
    Key(
        "topology.bolts.watermark.event.interval.ms",
        int,
        None,
        "Event time: ms between watermarks (withWatermarkInterval); None = 1000.",
        nullable=True,
        minimum=1,
    ),
    Key(
        "topology.bolts.late.tuple.stream",
        str,
        None,
        "Event time: the stream late tuples are emitted on, field late_tuple "
        "(withLateTupleStream); None = dropped.",
        nullable=True,
    ),
    # --- network: frame size -----------------------------------------------------------------
    Key(
        "heron.network.max.frame.bytes",
        int,
        100 * MiB,
        "Largest frame (one part of a message) a daemon's TCP socket reads or writes; a peer "
        "announcing a bigger one is dropped before its buffer is allocated. Bounded below by "
        "the shell's 1 MiB file chunk plus headers (2 MiB) and above by 2 GiB; a tuple batch "
        "must fit in it.",
        minimum=2 * MiB,
        maximum=2 * GiB,
    ),
    # --- instance: tuple size ------------------------------------------------------------------
    Key(
        "heron.instance.max.tuple.bytes",
        int,
        32 * MiB,
        "Largest tuple an instance sends, measured as its serialized values (marshal, or "
        "pickle): an emit past it fails the instance with an error naming the component, "
        "stream and size (Storm fails the worker on a tuple it cannot serialize); batches "
        "are split so that none passes it. Must be below heron.network.max.frame.bytes "
        "(the rest is room for the batch's envelope and anchors).",
        minimum=1024,
    ),
    Key(
        "heron.instance.batch.max.bytes",
        int,
        256 * 1024,
        "Serialized size an instance keeps its outgoing batches near: after a batch over it, "
        "that stream's batches to that task take half as many tuples (down to one), after a "
        "full one under a quarter of it twice as many (up to heron.instance.batch.max.tuples). "
        "zmq's queues hold a number of messages, so this bounds their bytes under overload.",
        minimum=1024,
    ),
)

_ORDERINGS = (
    Ordering(
        "heron.streammgr.network.backpressure.lowwatermark.mb",
        "heron.streammgr.network.backpressure.highwatermark.mb",
    ),
    Ordering(
        "heron.executor.restart.backoff.initial.secs",
        "heron.executor.restart.backoff.max.secs",
        strict=False,
    ),
    Ordering("heron.instance.max.tuple.bytes", "heron.network.max.frame.bytes"),
)

SPARK_CONF_PREFIX = KeyPrefix(
    "heron.scheduler.spark.conf.",
    "A Spark property for the spark scheduler's SparkConf, named by the rest of the key "
    "(heron.scheduler.spark.conf.spark.cores.max=4 sets spark.cores.max to '4').",
)

_PREFIXES = (SPARK_CONF_PREFIX,)

REGISTRY = Registry(_KEYS, _ORDERINGS, _PREFIXES)
"""Every registered key by canonical name (aliases and keys under a prefix resolve through
``REGISTRY.lookup``)."""
