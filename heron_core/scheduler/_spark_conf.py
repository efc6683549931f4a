"""What the Spark scheduler decides without Spark: the master, the SparkConf, the task slots a
topology needs, and readable reasons for failed jobs (pure functions, tested without a JVM).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from heron_core.config import SPARK_CONF_PREFIX
from heron_core.errors import ConfigurationError
from heron_core.proto import packing_plan_pb2

__all__ = [
    "MASTER_KEY",
    "SparkMaster",
    "containers_needed",
    "describe_job_failure",
    "fixed_slot_limit",
    "parse_master",
    "slot_shortfall",
    "spark_properties",
    "task_cpus",
    "user_properties",
]

MASTER_KEY = "heron.scheduler.spark.master"
CPUS_KEY = "heron.scheduler.spark.container.cpus"
STANDALONE_PORT = 7077
FAILURE_MARK = "ContainerFailure: "
"""How the message of a container task's failure starts in the traceback Spark reports."""

_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:,\s*(\d+))?\])?")


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


def task_cpus(properties: Mapping[str, str]) -> int:
    """``spark.task.cpus`` of ``properties`` (Spark's default: 1).

    Raises:
        ConfigurationError: not a positive integer.
    """
    raw = properties.get("spark.task.cpus", "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(
            f"{SPARK_CONF_PREFIX.prefix}spark.task.cpus: expected a positive integer, got {raw!r}"
        )
    return value


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
    ``spark.pyspark.driver.python`` ``python`` (the topology's interpreter); with
    ``heron.scheduler.spark.container.cpus: packing``, ``spark.task.cpus`` the largest
    container's packing-plan CPU rounded up. ``spark.master`` is the master key's.

    Raises:
        ConfigurationError: ``spark.master`` set as a Spark property (use the master key), or
            ``spark.speculation`` on (a speculative copy of a container's task would run the
            container twice).

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
    }
    if config.get(CPUS_KEY, "slot") == "packing" and plan.containers:
        largest = max(c.required_resource.cpu for c in plan.containers)
        properties["spark.task.cpus"] = str(max(1, math.ceil(largest - 1e-9)))
    properties.update(user)
    properties["spark.master"] = str(config.get(MASTER_KEY, "local[2]"))
    task_cpus(properties)  # validated here, before any JVM starts
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
    cores_max = properties.get("spark.cores.max")
    if cores_max is not None and cores_max.strip().isdigit():
        return int(cores_max) // cpus, f"spark.cores.max={cores_max.strip()}{each}"
    return None


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
