"""What the Spark scheduler decides without Spark: the master, the SparkConf, the task slots a
topology needs and those a standalone master can give (from its ``/json/`` document), and
readable reasons for failed jobs (pure functions, tested without a JVM).
"""

from __future__ import annotations

import math
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from heron_core.config import SPARK_CONF_PREFIX, setting
from heron_core.errors import ConfigurationError
from heron_core.proto import packing_plan_pb2

__all__ = [
    "ALLOW_UNAUTHENTICATED_KEY",
    "MASTER_KEY",
    "SECRET_FILE_KEY",
    "SparkMaster",
    "containers_needed",
    "describe_job_failure",
    "fixed_slot_limit",
    "master_state_problem",
    "master_state_urls",
    "memory_mb",
    "parse_master",
    "slot_shortfall",
    "spark_properties",
    "standalone_slot_limit",
    "task_cpus",
    "user_properties",
]

MASTER_KEY = "heron.scheduler.spark.master"
CPUS_KEY = "heron.scheduler.spark.container.cpus"
SECRET_FILE_KEY = "heron.scheduler.spark.auth.secret.file"
ALLOW_UNAUTHENTICATED_KEY = "heron.scheduler.spark.allow.unauthenticated"
STANDALONE_PORT = 7077
MASTER_UI_PORT = "spark.master.ui.port"
"""The Spark property naming the standalone master's web UI port (the master's own setting;
here it tells the scheduler where to read the master's ``/json/``)."""
MASTER_UI_DEFAULT_PORT = 8080
FAILURE_MARK = "ContainerFailure: "
"""How the message of a container task's failure starts in the traceback Spark reports."""

_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:,\s*(\d+))?\])?")
_MEMORY = re.compile(r"(\d+)\s*([kmgtp]?)b?", re.IGNORECASE)
_POSITIVE_PROPERTIES = (
    "spark.task.cpus",
    "spark.cores.max",
    "spark.executor.cores",
    MASTER_UI_PORT,
)


@dataclass(frozen=True)
class SparkMaster:
    """A parsed ``heron.scheduler.spark.master``.

    Attributes:
        url: the URL as given (passed to Spark unchanged).
        kind: ``"local"`` (embedded, ``local[N]``), ``"standalone"`` (``spark://``) or
            ``"other"`` (anything else: ``yarn``, ``k8s://...``; passed through, untested).
        local_slots: for ``local[N]``, N (``local[*]``: this machine's CPUs); else None.
        endpoints: for ``spark://``, each master's ``(host, port)``.

    >>> parse_master("local[3]").local_slots, parse_master("spark://a:7077,b:7078").endpoints
    (3, (('a', 7077), ('b', 7078)))
    """

    url: str
    kind: str
    local_slots: int | None = None
    endpoints: tuple[tuple[str, int], ...] = ()

    @property
    def is_local(self) -> bool:
        """Whether every container runs on this host (``local[N]``)."""
        return self.kind == "local"


def parse_master(url: str) -> SparkMaster:
    """Parse a Spark master URL (see `SparkMaster`).

    Raises:
        ConfigurationError: an empty URL, ``local[N]`` with N < 1, or a ``spark://`` URL
            without a host or with a bad port; the message names the key.

    >>> parse_master("yarn").kind, parse_master("local").local_slots
    ('other', 1)
    """
    url = url.strip()
    problem = "expected local[N] (N >= 1), local[*], spark://host:port, or another master URL"
    if not url:
        raise ConfigurationError(f"{MASTER_KEY} is empty: {problem}")
    if url.startswith("local") and not url.startswith("local-cluster"):
        match = _LOCAL.fullmatch(url)
        if match is None or match.group(1) == "0":
            raise ConfigurationError(f"{MASTER_KEY}: {problem}, got {url!r}")
        threads = match.group(1)
        slots = 1 if threads is None else (os.cpu_count() or 1) if threads == "*" else int(threads)
        return SparkMaster(url, "local", local_slots=slots)
    if url.startswith("spark://"):
        endpoints = []
        for part in url.removeprefix("spark://").split(","):
            host, _, port = part.strip().rpartition(":") if ":" in part else (part, "", "")
            host = host.strip("[]")
            if not host or (port and not port.isdigit()):
                raise ConfigurationError(f"{MASTER_KEY}: {problem}, got {url!r}")
            endpoints.append((host, int(port) if port else STANDALONE_PORT))
        return SparkMaster(url, "standalone", endpoints=tuple(endpoints))
    return SparkMaster(url, "other")


def user_properties(config: Mapping[str, Any]) -> dict[str, str]:
    """The Spark properties the config sets through ``heron.scheduler.spark.conf.<property>``.

    >>> user_properties({"heron.scheduler.spark.conf.spark.cores.max": "4", "x": 1})
    {'spark.cores.max': '4'}
    """
    prefix = SPARK_CONF_PREFIX.prefix
    return {
        SPARK_CONF_PREFIX.suffix(key): str(value)
        for key, value in config.items()
        if key.startswith(prefix)
    }


def containers_needed(plan: packing_plan_pb2.PackingPlan) -> int:
    """How many containers (so Spark tasks) the topology runs: the tmanager's and one per
    container of the packing plan."""
    return 1 + len(plan.containers)


def _positive(properties: Mapping[str, str], name: str) -> int | None:
    """Spark property ``name`` of ``properties`` as a positive integer, None when unset.

    Raises:
        ConfigurationError: set, but not a positive integer.
    """
    raw = properties.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(
            f"{SPARK_CONF_PREFIX.prefix}{name}: expected a positive integer, got {raw!r}"
        )
    return value


def task_cpus(properties: Mapping[str, str]) -> int:
    """``spark.task.cpus`` of ``properties`` (Spark's default: 1).

    Raises:
        ConfigurationError: not a positive integer.
    """
    return _positive(properties, "spark.task.cpus") or 1


def spark_properties(
    config: Mapping[str, Any],
    topology_name: str,
    plan: packing_plan_pb2.PackingPlan,
    python: str,
) -> dict[str, str]:
    """The SparkConf of topology ``topology_name``'s application.

    The scheduler's defaults, which ``heron.scheduler.spark.conf.<property>`` keys override:
    ``spark.app.name`` ``heron-<topology>``; ``spark.scheduler.mode`` ``FAIR`` (one job per
    container, each from its own driver thread); ``spark.task.maxFailures`` 1 (a container's
    task that fails ends its job, and the scheduler starts the container again with its
    back-off, so that every failure reaches it with its reason); ``spark.python.task.killTimeout``
    ``500ms`` (a cancelled container's Python worker, and with it every process of the
    container, is killed soon after); ``spark.pyspark.python`` and
    ``spark.pyspark.driver.python`` ``python`` (the topology's interpreter);
    ``spark.ui.enabled`` and ``spark.ui.killEnabled`` ``false`` (the driver's web UI has no
    login and listens on every address: whoever reaches it reads the application's
    environment and threads and can kill its jobs; Heron's UI and tracker show the topology);
    with ``heron.scheduler.spark.container.cpus: packing``, ``spark.task.cpus`` the largest
    container's packing-plan CPU rounded up. ``spark.master`` is the master key's. The
    authentication properties come from `spark_security` (``_spark_auth``).

    Raises:
        ConfigurationError: ``spark.master`` set as a Spark property (use the master key),
            ``spark.speculation`` on (a speculative copy of a container's task would run the
            container twice), or ``spark.task.cpus``, ``spark.cores.max``,
            ``spark.executor.cores`` or ``spark.master.ui.port`` not a positive integer; the
            message names the topology.

    >>> plan = packing_plan_pb2.PackingPlan(containers=[packing_plan_pb2.ContainerPlan(id=1)])
    >>> props = spark_properties({MASTER_KEY: "local[2]"}, "wc", plan, "/venv/bin/python")
    >>> props["spark.app.name"], props["spark.master"], props["spark.pyspark.python"]
    ('heron-wc', 'local[2]', '/venv/bin/python')
    """
    user = user_properties(config)
    if "spark.master" in user:
        raise ConfigurationError(
            f"{SPARK_CONF_PREFIX.prefix}spark.master is not allowed: set {MASTER_KEY} instead"
        )
    if user.get("spark.speculation", "false").strip().lower() not in ("false", "0", "no"):
        raise ConfigurationError(
            f"topology {topology_name!r}: {SPARK_CONF_PREFIX.prefix}spark.speculation must stay "
            "false: a speculative copy of a container's Spark task would run the container twice"
        )
    properties = {
        "spark.app.name": f"heron-{topology_name}",
        "spark.scheduler.mode": "FAIR",
        "spark.task.maxFailures": "1",
        "spark.python.task.killTimeout": "500ms",
        "spark.speculation": "false",
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": python,
        "spark.ui.enabled": "false",
        "spark.ui.killEnabled": "false",
    }
    if setting(config, CPUS_KEY) == "packing" and plan.containers:
        largest = max(c.required_resource.cpu for c in plan.containers)
        properties["spark.task.cpus"] = str(max(1, math.ceil(largest - 1e-9)))
    properties.update(user)
    properties["spark.master"] = str(setting(config, MASTER_KEY))
    for name in _POSITIVE_PROPERTIES:  # validated here, before any JVM starts
        try:
            _positive(properties, name)
        except ConfigurationError as exc:
            raise ConfigurationError(f"topology {topology_name!r}: {exc}") from None
    return properties


def fixed_slot_limit(master: SparkMaster, properties: Mapping[str, str]) -> tuple[int, str] | None:
    """The most task slots the application can ever get when the config alone says so, with
    what limits it: ``local[N]`` (N threads), or ``spark.cores.max`` on a cluster. None when
    only the running application can tell.

    >>> fixed_slot_limit(parse_master("local[4]"), {"spark.task.cpus": "2"})
    (2, 'master local[4] runs 4 task threads, spark.task.cpus=2 each')
    >>> fixed_slot_limit(parse_master("spark://m:7077"), {"spark.cores.max": "2"})
    (2, 'spark.cores.max=2')
    """
    cpus = task_cpus(properties)
    each = f", spark.task.cpus={cpus} each" if cpus > 1 else ""
    if master.local_slots is not None:
        threads = master.local_slots
        plural = "s" * (threads != 1)
        return threads // cpus, f"master {master.url} runs {threads} task thread{plural}{each}"
    cores_max = _positive(properties, "spark.cores.max")
    if cores_max is not None and master.kind == "standalone":
        return cores_max // cpus, f"spark.cores.max={cores_max}{each}"
    return None


def master_state_urls(master: SparkMaster, properties: Mapping[str, str]) -> list[str]:
    """Where each master of a ``spark://`` URL serves its state: ``/json/`` of its web UI, on
    port ``spark.master.ui.port`` of ``properties`` (Spark's default: 8080).

    >>> master_state_urls(parse_master("spark://a:7077,[::1]:7078"),
    ...                   {"spark.master.ui.port": "8081"})
    ['http://a:8081/json/', 'http://[::1]:8081/json/']
    """
    port = properties.get(MASTER_UI_PORT, str(MASTER_UI_DEFAULT_PORT)).strip()
    hosts = (f"[{host}]" if ":" in host else host for host, _ in master.endpoints)
    return [f"http://{host}:{port}/json/" for host in hosts]


def master_state_problem(state: Any, port: int) -> str | None:
    """Why the ``/json/`` document ``state`` cannot be used as the state of the master on RPC
    port ``port`` (None when it can): not a master's document, another master's (its
    ``url`` has another port: another web server answered), or a master not ALIVE (a
    standby of a highly available pair).

    >>> state = {"url": "spark://m:7077", "status": "ALIVE", "workers": []}
    >>> master_state_problem(state, 7077) is None
    True
    >>> master_state_problem(state, 7078)
    "the state of another master ('spark://m:7077')"
    >>> master_state_problem({**state, "status": "STANDBY"}, 7077)
    'that master is STANDBY'
    >>> master_state_problem(["not", "a", "master"], 7077)
    "not a Spark master's state"
    """
    if not isinstance(state, dict) or not isinstance(state.get("workers"), list):
        return "not a Spark master's state"
    try:
        served = urllib.parse.urlsplit(str(state.get("url", ""))).port
    except ValueError:
        served = None
    if served != port:
        return f"the state of another master ({state.get('url')!r})"
    if state.get("status") != "ALIVE":
        return f"that master is {state.get('status')}"
    return None


def memory_mb(text: str) -> int | None:
    """A Spark memory string (``512m``, ``2g``, ``1024k``; no unit: bytes) in MiB, as Spark
    reads ``spark.executor.memory``; None when it does not parse.

    >>> memory_mb("2g"), memory_mb("512M"), memory_mb("1048576"), memory_mb("lots")
    (2048, 512, 1, None)
    """
    match = _MEMORY.fullmatch(text.strip())
    if match is None:
        return None
    scale = 1024 ** " kmgtp".index((match.group(2) or " ").lower())
    return int(match.group(1)) * scale // 1024**2


def _executor_memory_mb(properties: Mapping[str, str], environ: Mapping[str, str]) -> int | None:
    """The memory an executor of the application asks of a worker, as the SparkContext
    resolves it: ``spark.executor.memory``, ``$SPARK_EXECUTOR_MEMORY``, ``$SPARK_MEM``, else
    1024 MiB; None when the setting does not parse (Spark will say so itself)."""
    for value in (
        properties.get("spark.executor.memory"),
        environ.get("SPARK_EXECUTOR_MEMORY"),
        environ.get("SPARK_MEM"),
    ):
        if value:
            return memory_mb(value)
    return 1024


def standalone_slot_limit(
    state: Mapping[str, Any], properties: Mapping[str, str], environ: Mapping[str, str]
) -> tuple[int, str]:
    """The most task slots a new application gets from a standalone master now, with why:
    the free cores of the master's ALIVE workers (its ``/json/`` document ``state``), as the
    master hands them out: on each worker, executors of ``spark.executor.cores`` cores (by
    default one executor taking every free core) that each fit the worker's free memory
    (``spark.executor.memory``, see `_executor_memory_mb`; ``environ`` is the driver's
    environment), each executor giving ``cores // spark.task.cpus`` slots; at most
    ``spark.cores.max`` cores in all. Never less than what the master would grant (anything
    unknown counts as fitting), so a shortfall here is certain until other applications end
    or workers join.

    >>> workers = [{"state": "ALIVE", "cores": 2, "coresfree": 2, "memoryfree": 2048}] * 2
    >>> standalone_slot_limit({"workers": workers}, {}, {})
    (4, "4 free cores on the Spark master's 2 ALIVE workers")
    >>> standalone_slot_limit({"workers": workers}, {"spark.executor.memory": "4g"}, {})
    (0, "4 free cores on the Spark master's 2 ALIVE workers; none has the 4096 MiB of free \
memory an executor needs (spark.executor.memory)")
    """
    cpus = task_cpus(properties)
    per_executor = _positive(properties, "spark.executor.cores")
    memory = _executor_memory_mb(properties, environ)
    slots = alive = free_cores = all_cores = short = 0
    for worker in state.get("workers", ()):
        if worker.get("state") != "ALIVE":
            continue
        alive += 1
        free = int(worker.get("coresfree", 0))
        free_cores += free
        all_cores += int(worker.get("cores", 0))
        fit = free if memory is None else int(worker.get("memoryfree", 0)) // max(memory, 1)
        if fit < 1:
            short += 1
        if per_executor is not None:
            slots += min(free // per_executor, fit) * (per_executor // cpus)
        elif fit >= 1:
            slots += free // cpus
    why = (
        f"{free_cores} free core{'s' * (free_cores != 1)} on the Spark master's {alive} ALIVE "
        f"worker{'s' * (alive != 1)}"
    )
    if all_cores > free_cores:
        why += f", {all_cores - free_cores} of their {all_cores} taken by other applications"
    if per_executor is not None:
        why += f", {per_executor} per executor (spark.executor.cores)"
    if cpus > 1:
        why += f", spark.task.cpus={cpus} per task"
    if short and memory is not None:
        which = "none has" if short == alive else f"{short} of them lack{'s' * (short == 1)}"
        why += (
            f"; {which} the {memory} MiB of free memory an executor needs (spark.executor.memory)"
        )
    cores_max = _positive(properties, "spark.cores.max")
    if cores_max is not None and cores_max // cpus < slots:
        slots, why = cores_max // cpus, f"{why}; spark.cores.max={cores_max}"
    return slots, why


def slot_shortfall(
    topology_name: str,
    plan: packing_plan_pb2.PackingPlan,
    slots: int,
    limit: str,
    master: SparkMaster,
) -> str:
    """The error when the application's ``slots`` cannot hold every container at once.

    >>> plan = packing_plan_pb2.PackingPlan(containers=[packing_plan_pb2.ContainerPlan(id=1)] * 2)
    >>> print(slot_shortfall("wc", plan, 2, "master local[2] runs 2 task threads",
    ...                      parse_master("local[2]")))
    topology 'wc' needs 3 Spark task slots (one per container: the topology manager's and 2 \
stream managers'), the application has 2 (master local[2] runs 2 task threads): use local[3] \
or more (heron.scheduler.spark.master)
    """
    needed = containers_needed(plan)
    stmgrs = needed - 1
    managers = "stream managers'" if stmgrs != 1 else "stream manager's"
    what = (
        f"topology {topology_name!r} needs {needed} Spark task slots (one per container: the "
        f"topology manager's and {stmgrs} {managers}), the application has {slots} ({limit})"
    )
    if master.is_local:
        fix = f"use local[{needed}] or more ({MASTER_KEY})"
        if "spark.task.cpus" in limit:
            fix = f"raise N in local[N] or lower spark.task.cpus ({MASTER_KEY})"
    else:
        fix = (
            "raise spark.cores.max or the workers' cores "
            f"({SPARK_CONF_PREFIX.prefix}spark.cores.max), or lower topology.stmgrs"
        )
    return f"{what}: {fix}"


def describe_job_failure(text: str) -> str:
    """The reason in the text of a failed Spark job's exception (a ``Py4JJavaError``), without
    the Java stack: a container's own failure message, else the last line of the Python
    traceback, else Spark's reason for the task failure, else the first line.

    >>> describe_job_failure(
    ...     "An error occurred while calling o1.collect.\\n: org.apache.spark.SparkException: "
    ...     "Job aborted due to stage failure: ... most recent failure: Lost task 0.0 in stage "
    ...     "1.0 (TID 1) (10.0.0.2 executor 0): ExecutorLostFailure (executor 0 exited) Reason: "
    ...     "Command exited with code 137\\n\\tat org.apache.spark.Foo(Foo.scala:1)")
    'ExecutorLostFailure (executor 0 exited) Reason: Command exited with code 137'
    """
    lines = text.splitlines()
    for line in reversed(lines):
        at = line.find(FAILURE_MARK)
        if at >= 0:
            return line[at + len(FAILURE_MARK) :].strip()
    starts = [i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line]
    if starts:
        start = starts[-1]
        tail = []
        for line in lines[start + 1 :]:
            if line.startswith(("\tat ", "Driver stacktrace")):
                break
            if line.strip() and not line.strip().startswith("SQLSTATE"):
                tail.append(line.strip())
        if tail:
            return tail[-1]
    for line in lines:
        at = line.find("most recent failure: ")
        if at >= 0:
            reason = line[at + len("most recent failure: ") :]
            reason = re.sub(r"^Lost task [^:]*\):\s*", "", reason)
            return reason.strip()
    for line in lines:
        if line.startswith(": "):
            return re.sub(r"^:\s*[\w.$]+(Exception|Error):\s*", "", line).strip()[:500]
    return (lines[0] if lines else text).strip()[:500]
