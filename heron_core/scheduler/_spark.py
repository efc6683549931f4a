"""SparkScheduler: every container of a topology is one long-running task of a Spark application.

The scheduler service (``python -m heron_core.scheduler``) holds the PySpark driver, in client
mode, on ``heron.scheduler.spark.master``. Each container K gets a driver thread that runs a
single-partition job (``parallelize([K], 1).mapPartitions(ContainerTask(...)).collect()``) in
job group ``heron-<topology>-<K>``, under the FAIR scheduler, so that the containers' jobs run
side by side and can be cancelled one by one. The task runs the container's executor on
whichever Spark executor it lands on (see `ContainerTask`). When the task fails (its executor
died, or the Spark executor hosting it did), the job ends with the reason, and the thread
starts the container again alone, after the ``heron.executor.restart.*`` back-off; the other
containers keep their processes.

The application authenticates and encrypts its RPC as `spark_security` decides (refusing,
before anything starts, one that would hand the container package to whoever asks); the
package, with the topology's key pair, travels as a Spark broadcast, never as a file of
Spark's file server, which serves any client.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil

from heron_core.config import SPARK_CONF_PREFIX, setting
from heron_core.errors import ConfigurationError, SchedulerError
from heron_core.executor import (
    RestartPolicy,
    executor_grace_secs,
    ipc_dirs,
    state_config_json,
)
from heron_core.proto import packing_plan_pb2
from heron_core.scheduler._package import build_package, remove_unpacked
from heron_core.scheduler._spark_auth import (
    SECRET,
    SparkSecurity,
    describe_refusal,
    master_refusal,
    spark_security,
)
from heron_core.scheduler._spark_conf import (
    ALLOW_UNAUTHENTICATED_KEY,
    MASTER_KEY,
    MASTER_UI_PORT,
    SparkMaster,
    containers_needed,
    describe_job_failure,
    fixed_slot_limit,
    master_state_problem,
    master_state_urls,
    parse_master,
    slot_shortfall,
    spark_properties,
    standalone_slot_limit,
)
from heron_core.scheduler._spark_task import ContainerTask
from heron_core.scheduler.base import Scheduler, TopologyRuntime

__all__ = ["INSTALL_HINT", "SparkScheduler"]

log = logging.getLogger(__name__)

INSTALL_HINT = "PySpark is not installed: pip install 'heron-storm[spark]'"

_STATE_KEY = "heron.class.state.manager"
_SLOTS_TIMEOUT_KEY = "heron.scheduler.spark.slots.timeout.secs"
_SLOTS_SETTLE_SECS = 10.0
_PROBE_TIMEOUT_SECS = 5.0
_STATE_TIMEOUT_SECS = 5.0
_JOIN_SECS = 30.0


def _require_pyspark() -> None:
    try:
        importlib.import_module("pyspark")
    except ImportError as exc:
        raise SchedulerError(f"{INSTALL_HINT} ({exc})") from None


def _java() -> str:
    """The ``java`` Spark will run: ``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``.

    Raises:
        SchedulerError: neither exists.
    """
    home = os.environ.get("JAVA_HOME", "").strip()
    if home:
        java = Path(home) / "bin" / "java"
        if os.access(java, os.X_OK):
            return str(java)
        raise SchedulerError(
            f"JAVA_HOME={home} has no bin/java: Spark needs Java 17 or 21; point JAVA_HOME at "
            "a Java installation"
        )
    found = shutil.which("java")
    if found is None:
        raise SchedulerError(
            "no Java found (JAVA_HOME is not set and there is no java on PATH): Spark needs "
            "Java 17 or 21; install it and set JAVA_HOME"
        )
    return found


def _stopped(sc: Any) -> bool:
    """Whether the SparkContext ``sc`` is stopped (or its JVM is gone)."""
    try:
        return bool(sc._jsc.sc().isStopped())
    except Exception:
        return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _master_state(master: SparkMaster, properties: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``/json/`` document of the ALIVE master among those of ``master`` (a ``spark://``
    URL; see `master_state_urls`), None when none answers with one (each failure is logged).
    A document is taken only from a master whose ``url`` has the port asked for, so that
    another web server on that port is never mistaken for it."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a cluster address
    problems = []
    urls = master_state_urls(master, properties)
    for url, (_, port) in zip(urls, master.endpoints, strict=True):
        try:
            with opener.open(url, timeout=_STATE_TIMEOUT_SECS) as answer:
                state = json.load(answer)
        except (OSError, ValueError) as exc:
            problems.append(f"{url}: {exc}")
            continue
        problem = master_state_problem(state, port)
        if problem is None:
            return dict(state)
        problems.append(f"{url}: {problem}")
    log.info(
        "cannot read the Spark master's state (%s): the task slots are counted once executors "
        "register instead; set %s%s to the master's web UI port to check them before Spark "
        "starts",
        "; ".join(problems),
        SPARK_CONF_PREFIX.prefix,
        MASTER_UI_PORT,
    )
    return None


class SparkScheduler(Scheduler):
    """Runs each container of a topology as one long-running task of a Spark application.

    Config: ``heron.scheduler.spark.master``, ``heron.scheduler.spark.conf.<property>`` (into
    the SparkConf), ``heron.scheduler.spark.auth.secret.file``,
    ``heron.scheduler.spark.allow.unauthenticated``,
    ``heron.scheduler.spark.slots.timeout.secs``, ``heron.scheduler.spark.container.cpus``
    and the ``heron.executor.restart.*`` back-off.
    PySpark is imported only once the scheduler starts (the ``spark`` extra).

    Args:
        clock: monotonic seconds, for the back-off and the slot wait.
        python: the interpreter of the Spark workers (``spark.pyspark.python``) when the
            config does not set one; default: this one.
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, python: str | None = None
    ) -> None:
        self._clock = clock
        self._python = python or sys.executable
        self._worker_python = self._python
        self._lock = threading.Lock()
        self._killed = threading.Event()
        self._threads: dict[int, threading.Thread] = {}
        self._restarting: set[int] = set()
        self._retired: set[int] = set()  # containers an update removed: not started again
        self._driver_host = ""
        self._starts: dict[int, int] = {}
        self._failure: str | None = None
        self._sc: Any = None
        self._gateway: Any = None
        self._package: Any = None
        self._security: SparkSecurity | None = None
        self._config: Mapping[str, Any] = {}
        self._runtime: TopologyRuntime | None = None
        self._master: SparkMaster | None = None
        self._policy: RestartPolicy | None = None

    # ------------------------------------------------------------------------------ checks

    def validate_config(self, config: Mapping[str, Any]) -> None:
        """See `Scheduler.validate_config`: the master URL and the Spark properties parse,
        the application can authenticate or the config allows it not to (`spark_security`,
        which reads the secret file), PySpark and Java are installed, and a cluster master
        has a state manager its containers can reach (not ``localfs``). Every message names
        the topology."""
        name = str(config.get("topology.name") or "?")
        try:
            master = parse_master(str(setting(config, MASTER_KEY)))
            spark_properties(config, name, packing_plan_pb2.PackingPlan(), self._python)
        except ConfigurationError as exc:
            if str(exc).startswith("topology "):
                raise
            raise ConfigurationError(f"topology {name!r}: {exc}") from None
        state = setting(config, _STATE_KEY)
        if not master.is_local and state == "localfs":
            raise ConfigurationError(
                f"topology {name!r}: the localfs state manager keeps state in files on this "
                f"host, which the containers on Spark master {master.url!r} cannot read: use "
                f"{_STATE_KEY}=zookeeper with heron.statemgr.connection.string naming a "
                "ZooKeeper every Spark worker reaches (or a local[N] master)"
            )
        spark_security(config, master, name)
        _require_pyspark()
        _java()

    def _probe_master(self, master: SparkMaster) -> None:
        """Fail fast when no ``spark://`` master answers (Spark itself retries for a minute)."""
        errors = []
        for host, port in master.endpoints:
            try:
                with socket.create_connection((host, port), timeout=_PROBE_TIMEOUT_SECS):
                    return
            except OSError as exc:
                errors.append(f"{host}:{port}: {exc.strerror or exc}")
        if errors:
            name = self._runtime.topology_name if self._runtime else "?"
            raise SchedulerError(
                f"topology {name!r}: cannot reach the Spark master {master.url} "
                f"({'; '.join(errors)}): start it, or set {MASTER_KEY} to a running master"
            )

    # ------------------------------------------------------------------------------ lifecycle

    def initialize(self, config: Mapping[str, Any], runtime: TopologyRuntime) -> None:
        """See `Scheduler.initialize`: checks the config (`validate_config`) and that a
        ``spark://`` master answers; starts nothing. Warns when the application will run
        unprotected (``heron.scheduler.spark.allow.unauthenticated``)."""
        self.validate_config({**config, "topology.name": runtime.topology_name})
        self._config = dict(config)
        self._runtime = runtime
        self._policy = RestartPolicy.from_config(config)
        self._master = parse_master(str(setting(config, MASTER_KEY)))
        self._security = spark_security(config, self._master, runtime.topology_name)
        if self._security.unprotected is not None:
            log.warning(
                "topology %r runs on Spark WITHOUT protection of its container package (%s; "
                "allowed by %s): whoever reaches the application's ports can fetch the "
                "topology's key pair and run code as the topology",
                runtime.topology_name,
                self._security.unprotected,
                ALLOW_UNAUTHENTICATED_KEY,
            )
        if self._master.kind == "standalone":
            self._probe_master(self._master)
        elif self._master.kind == "other":
            log.warning(
                "Spark master %r is passed to Spark unchanged; only local[N] and spark:// "
                "are tested",
                self._master.url,
            )

    def on_schedule(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """See `Scheduler.on_schedule`: checks that the application can get a task slot for
        every container (`_check_slots`, before Spark starts), starts the Spark application,
        waits until it has those slots, ships the container package and starts one job per
        container. Returns once every job is submitted.

        Raises:
            SchedulerError: Spark does not start, too few task slots, or already scheduled.
        """
        runtime, master, policy = self._runtime, self._master, self._policy
        if runtime is None or master is None or policy is None:
            raise SchedulerError("SparkScheduler.on_schedule called before initialize")
        name = runtime.topology_name
        if self._sc is not None:
            raise SchedulerError(f"topology {name!r}: the spark scheduler already scheduled a plan")
        properties = spark_properties(self._config, name, packing_plan, self._python)
        assert self._security is not None
        properties.update(self._security.properties)
        self._worker_python = properties["spark.pyspark.python"]
        containers = [0, *sorted(c.id for c in packing_plan.containers)]
        offered = self._check_slots(packing_plan, properties)
        try:
            sc = self._start_context(properties, self._security)
            self._wait_for_slots(sc, packing_plan, properties, offered)
            self._package = sc.broadcast(build_package(runtime.working_dir))
            self._driver_host = sc.getConf().get("spark.driver.host") or ""
            for k in containers:
                self._threads[k] = self._container_thread(sc, k)
            for thread in self._threads.values():
                thread.start()
        except BaseException:
            self._killed.set()
            self._stop_context()
            raise
        log.info(
            "topology %r: Spark application %s on %s (driver spark://%s:%s, %s) runs containers %s",
            name,
            sc.applicationId,
            master.url,
            self._driver_host,
            sc.getConf().get("spark.driver.port"),
            "authenticated" if self._security.authenticates else "NOT authenticated",
            ", ".join(map(str, containers)),
        )

    def _container_thread(self, sc: Any, container: int) -> threading.Thread:
        """The (unstarted) driver thread of ``container``'s job."""
        runtime, policy = self._runtime, self._policy
        assert runtime is not None and policy is not None
        task = ContainerTask(
            topology_name=runtime.topology_name,
            topology_id=runtime.topology_id,
            cluster=runtime.cluster,
            container=container,
            state_config=state_config_json(self._config),
            package=self._package,
            driver_host=self._driver_host,
            on_cluster=self._master is not None and not self._master.is_local,
            backoff_initial_secs=policy.initial_secs,
            backoff_max_secs=policy.max_secs,
        )
        return threading.Thread(
            target=self._run_container, args=(sc, task), name=f"container-{container}", daemon=True
        )

    def _start_context(self, properties: Mapping[str, str], security: SparkSecurity) -> Any:
        """Start the driver's JVM with ``properties`` on its command line (PySpark passes
        them as ``--conf``), then the SparkContext with ``security``'s secret added to its
        SparkConf inside the JVM, so that the secret is on no command line. A standalone
        master is asked first whether it accepts the application's authentication
        (`master_refusal`).

        Raises:
            SchedulerError: the JVM or the application cannot start, or the master refuses
                the application (naming the fix).
        """
        try:
            from pyspark import SparkConf, SparkContext
            from pyspark.java_gateway import launch_gateway
        except ImportError as exc:
            raise SchedulerError(INSTALL_HINT) from exc
        assert self._master is not None
        # PySpark takes the workers' Python from PYSPARK_PYTHON of the driver process (the
        # spark.pyspark.* properties only reach a driver that spark-submit starts).
        os.environ["PYSPARK_PYTHON"] = properties["spark.pyspark.python"]
        os.environ["PYSPARK_DRIVER_PYTHON"] = properties["spark.pyspark.driver.python"]
        name = self._runtime.topology_name if self._runtime else "?"
        try:
            self._gateway = launch_gateway(
                SparkConf(loadDefaults=False).setAll(list(properties.items()))
            )
            conf = SparkConf(loadDefaults=False, _jvm=self._gateway.jvm)
            conf.setAll(list(properties.items()))
            if security.secret is not None:
                conf.set(SECRET, security.secret)
        except Exception as exc:
            raise SchedulerError(
                f"topology {name!r}: cannot start the Spark driver: {_first_line(exc)} (see "
                "the scheduler's log)"
            ) from None
        if self._master.kind == "standalone":
            refusal = master_refusal(self._gateway.jvm, conf._jconf, self._master)
            if refusal is not None:
                raise SchedulerError(describe_refusal(security, self._master, name, refusal))
        try:
            sc = SparkContext(conf=conf, gateway=self._gateway)
        except Exception as exc:
            raise SchedulerError(
                f"topology {name!r}: cannot start the Spark application on "
                f"{properties['spark.master']}: {_first_line(exc)} (see the scheduler's log)"
            ) from None
        self._sc = sc
        return sc

    def _check_slots(
        self, plan: packing_plan_pb2.PackingPlan, properties: Mapping[str, str]
    ) -> bool:
        """Fail before Spark starts when the application cannot get a task slot for every
        container: the config caps the slots (``local[N]``, ``spark.cores.max``), or a
        standalone master's ALIVE workers have too few free cores (`standalone_slot_limit`,
        from the master's ``/json/``). When the master's state cannot be read, the check is
        left to `_wait_for_slots`. Returns whether a standalone master's state showed enough
        free cores.

        Raises:
            SchedulerError: too few slots, naming what limits them and the fix.
        """
        assert self._runtime is not None and self._master is not None
        name, master = self._runtime.topology_name, self._master
        needed = containers_needed(plan)
        limit = fixed_slot_limit(master, properties)
        if limit is not None and limit[0] < needed:
            raise SchedulerError(slot_shortfall(name, plan, limit[0], limit[1], master))
        if master.kind != "standalone":
            return False
        state = _master_state(master, properties)
        if state is None:
            return False
        slots, why = standalone_slot_limit(state, properties, os.environ)
        log.info("the Spark master can give %d task slots (%s); %d needed", slots, why, needed)
        if slots < needed:
            raise SchedulerError(slot_shortfall(name, plan, slots, why, master))
        return True

    def _wait_for_slots(
        self,
        sc: Any,
        plan: packing_plan_pb2.PackingPlan,
        properties: Mapping[str, str],
        offered: bool,
    ) -> None:
        """Return once the application has a task slot for every container at once (its
        executors registered). ``offered``: the master's state showed free cores for all of
        them, so executors still to register are waited for until the timeout (on a loaded
        machine one can register 20 s after another), not only while their count grows.

        Raises:
            SchedulerError: the executors that registered within the wait offer too few.
        """
        assert self._runtime is not None and self._master is not None
        name, master = self._runtime.topology_name, self._master
        needed = containers_needed(plan)
        if properties.get("spark.dynamicAllocation.enabled", "false").lower() == "true":
            log.warning("dynamic allocation is on: not waiting for %d task slots", needed)
            return
        jsc = sc._jsc.sc()
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        timeout = float(setting(self._config, _SLOTS_TIMEOUT_KEY))
        start = self._clock()
        last, changed, first = -1, start, None
        while True:
            slots = int(jsc.maxNumConcurrentTasks(profile))
            if slots >= needed:
                log.info("the application has %d task slots for %d containers", slots, needed)
                return
            now = self._clock()
            if slots != last:
                last, changed = slots, now
            if slots > 0 and first is None:
                first = now
            # Executors register about together: once the count has not grown for 10 s, or for
            # as long as the first one took to come (a loaded machine), no more are coming.
            settle = max(_SLOTS_SETTLE_SECS, (first or now) - start)
            settled = not offered and slots > 0 and now - changed >= settle
            if _stopped(sc):
                raise SchedulerError(
                    f"topology {name!r}: the Spark application on {master.url} ended before "
                    "it had its task slots (Spark's reason is in the scheduler's log)"
                )
            if now - start >= timeout or settled:
                waited = f"executors that registered within {now - start:.0f} s"
                message = slot_shortfall(name, plan, slots, waited, master)
                security = self._security
                if (
                    slots == 0
                    and master.kind == "standalone"
                    and security
                    and security.authenticates
                ):
                    message += (
                        "; an executor whose worker runs without the application's secret "
                        "cannot register (every worker needs spark.authenticate=true and the "
                        "secret of the master)"
                    )
                raise SchedulerError(message)
            if self._killed.wait(0.25):
                raise SchedulerError(f"topology {name!r} was killed while Spark started")

    # ------------------------------------------------------------------------------ containers

    def _run_container(self, sc: Any, task: ContainerTask) -> None:
        """One container's driver thread: run its job, and run it again after it fails."""
        assert self._runtime is not None and self._policy is not None
        k, name = task.container, self._runtime.topology_name
        sc.setJobGroup(
            f"heron-{name}-{k}", f"heron topology {name}, container {k}", interruptOnCancel=True
        )
        crashes = 0
        while not self._killed.is_set() and k not in self._retired:
            started = self._clock()
            with self._lock:
                self._starts[k] = self._starts.get(k, 0) + 1
            log.info("starting container %d (Spark job %d of it)", k, self._starts[k])
            try:
                sc.parallelize([k], 1).mapPartitions(task).collect()
                reason = "its Spark task returned"
            except Exception as exc:
                if self._killed.is_set():
                    break
                reason = describe_job_failure(str(exc))
            with self._lock:
                expected = k in self._restarting
                self._restarting.discard(k)
            if self._killed.is_set() or k in self._retired:
                break
            if expected:
                log.info("container %d stopped for a restart; starting it again", k)
                continue
            self._record_failure(k, reason)
            if _stopped(sc):
                log.error(
                    "container %d failed (%s) and the Spark application has ended: it is no "
                    "longer started",
                    k,
                    reason,
                )
                break
            crashes = crashes + 1 if self._clock() - started < self._policy.max_secs else 1
            delay = self._policy.delay(crashes)
            log.warning(
                "container %d failed (%s); starting it again in %.1f s (crash %d in a row)",
                k,
                reason,
                delay,
                crashes,
            )
            self._killed.wait(delay)
        log.info("container %d: no longer started", k)

    def _record_failure(self, container: int, reason: str) -> None:
        name = self._runtime.topology_name if self._runtime else "?"
        message = f"container {container} of topology {name!r} failed on Spark: {reason}"
        if "No module named 'heron_core'" in reason:
            message += (
                f" (the Spark workers' Python, {self._worker_python}, cannot import heron_core: "
                "install heron-storm in the same venv path on every Spark host, or ship a "
                "packed venv with spark.archives and point spark.pyspark.python into it)"
            )
        with self._lock:
            if self._failure is None:
                self._failure = message

    def failure(self) -> str | None:
        """See `Scheduler.failure`: the first failure of any container's Spark job."""
        with self._lock:
            return self._failure

    def job_starts(self) -> dict[int, int]:
        """How many times each container's job was submitted, by container id."""
        with self._lock:
            return dict(self._starts)

    @property
    def application_id(self) -> str | None:
        """The Spark application's id, once started."""
        return None if self._sc is None else str(self._sc.applicationId)

    # ------------------------------------------------------------------------------ stopping

    def on_restart(self, container: int) -> None:
        """See `Scheduler.on_restart`: the container's job is cancelled (its task's worker,
        and with it every process of the container, is killed) and submitted again at once."""
        name = self._runtime.topology_name if self._runtime else "?"
        if self._sc is None or self._killed.is_set():
            raise SchedulerError(f"topology {name!r} is not running under this scheduler")
        if container != -1 and container not in self._threads:
            known = ", ".join(map(str, sorted(self._threads)))
            raise SchedulerError(
                f"topology {name!r} has no container {container}; containers: {known} or -1 for all"
            )
        targets = sorted(self._threads) if container == -1 else [container]
        for k in targets:
            with self._lock:
                self._restarting.add(k)
            log.info("restarting container %d on request", k)
            self._sc.cancelJobGroup(f"heron-{name}-{k}")

    def on_update(self, packing_plan: packing_plan_pb2.PackingPlan) -> None:
        """See `Scheduler.on_update`: the jobs of removed containers are cancelled for good,
        every other container's job is cancelled and submitted again, and new containers get
        a job. The application keeps the executors it has: the new plan must fit its task
        slots (checked before anything stops).

        Raises:
            SchedulerError: the application has too few task slots for the new plan, or the
                topology is not running.
        """
        runtime, sc = self._runtime, self._sc
        name = runtime.topology_name if runtime else "?"
        if sc is None or self._killed.is_set() or self._master is None:
            raise SchedulerError(f"topology {name!r} is not running under this scheduler")
        needed = containers_needed(packing_plan)
        jsc = sc._jsc.sc()
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        slots = int(jsc.maxNumConcurrentTasks(profile))
        if slots < needed:
            raise SchedulerError(
                slot_shortfall(name, packing_plan, slots, "the running application", self._master)
                + "; an update keeps the application's executors: kill the topology and "
                "submit it again to get more"
            )
        wanted = {0, *(c.id for c in packing_plan.containers)}
        running = {k for k in self._threads if k not in self._retired}
        removed, added = sorted(running - wanted), sorted(wanted - running)
        with self._lock:
            self._retired.update(removed)
            self._retired.difference_update(added)
            self._restarting.update(running & wanted)
        for k in sorted(running):
            log.info("update: cancelling the job of container %d", k)
            sc.cancelJobGroup(f"heron-{name}-{k}")
        for k in removed:
            self._threads.pop(k).join(_JOIN_SECS)
        for k in added:
            self._threads[k] = self._container_thread(sc, k)
            self._threads[k].start()
        log.info(
            "topology %r updated: containers %s removed, %s added, the others restarted",
            name,
            removed or "none",
            added or "none",
        )

    def on_kill(self) -> None:
        """See `Scheduler.on_kill`: cancels every container's job, stops the SparkContext (the
        application ends as FINISHED) and, with a ``local[N]`` master, waits until every
        process of the topology on this host has exited (SIGKILL after `executor_grace_secs`,
        15 s by default)."""
        with self._lock:
            if self._killed.is_set() and self._sc is None:
                return
            self._killed.set()
        sc = self._sc
        if sc is None:
            return
        local = self._local_processes() if self._master and self._master.is_local else []
        log.info("cancelling the Spark jobs of %d containers", len(self._threads))
        with contextlib.suppress(Exception):
            sc.cancelAllJobs()
        deadline = time.monotonic() + _JOIN_SECS
        for thread in self._threads.values():
            thread.join(max(deadline - time.monotonic(), 0.0))
        if self._package is not None:
            log.info("removing the container package's broadcast from the executors")
            with contextlib.suppress(Exception):
                self._package.destroy(blocking=False)
        log.info("stopping the Spark application")
        self._stop_context()
        log.info("the Spark application and its driver JVM have stopped")
        if local:
            grace = executor_grace_secs(self._config)
            _, alive = psutil.wait_procs(local, timeout=grace)
            for process in alive:
                log.warning("pid %d outlived the Spark application: SIGKILL", process.pid)
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            psutil.wait_procs(alive, timeout=grace)
            assert self._runtime is not None
            for container_dir in (self._runtime.working_dir / "containers").glob("*"):
                for directory in ipc_dirs(container_dir):
                    shutil.rmtree(directory, ignore_errors=True)
                remove_unpacked(container_dir)

    def _local_processes(self) -> list[psutil.Process]:
        """This topology's processes among this process's descendants (``local[N]``)."""
        assert self._runtime is not None
        found = []
        with contextlib.suppress(psutil.Error):
            for process in psutil.Process().children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if self._runtime.topology_id in process.cmdline():
                        found.append(process)
        return found

    def _stop_context(self) -> None:
        """Stop the SparkContext (the application ends; Spark deletes the driver's copies of
        the broadcast package with its temporary directories), then the driver's JVM, so that
        none of its processes outlives the scheduler."""
        sc, self._sc = self._sc, None
        gateway, self._gateway = self._gateway, None
        if sc is not None:
            try:
                sc.stop()
            except Exception as exc:
                log.warning("stopping the SparkContext: %s", _first_line(exc))
        if gateway is None:
            return
        from pyspark import SparkContext

        SparkContext._gateway, SparkContext._jvm = None, None
        proc = getattr(gateway, "proc", None)
        with contextlib.suppress(Exception):
            gateway.shutdown()
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the JVM exits at the end of its stdin
            try:
                proc.wait(timeout=_JOIN_SECS)
            except subprocess.TimeoutExpired:
                log.warning("the Spark driver JVM (pid %d) did not exit: SIGKILL", proc.pid)
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """See `Scheduler.close`."""
        self.on_kill()
