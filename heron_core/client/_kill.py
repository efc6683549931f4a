"""``heron kill``: stop every process of a topology, then delete its state and files.

Killing never unpickles anything and works on a topology whose nodes were tampered with: it
reads its nodes' MACs with the topology's key when this host holds the key pair, uses only
what passes (the working directory, the stop timeout, the state store of the checkpoints
to delete) and, for what does not, falls back on this host's own config and the id of the
topology (which only picks the processes to stop among those carrying ``--topology-id``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil
from google.protobuf.message import Message

from heron_core.ckptmgr import create_state_store
from heron_core.client import _launched as launched
from heron_core.client._config import (
    Progress,
    cluster_state,
    hold_key,
    quiet,
    stored_topology,
    working_dir,
)
from heron_core.config.codec import json_config_from_proto
from heron_core.errors import ConfigurationError
from heron_core.executor import executor_grace_secs, ipc_dirs
from heron_core.proto import execution_state_pb2, scheduler_pb2, topology_pb2
from heron_core.statemgr import Kind, StateAuthenticationError, StateManager

__all__ = [
    "dispose_checkpoints",
    "kill",
    "stop_timeout_secs",
    "stop_topology_processes",
    "topology_processes",
    "uninstall",
]

log = logging.getLogger(__name__)


def stop_timeout_secs(config: Mapping[str, Any]) -> float:
    """How long the processes of the topology whose config is ``config`` get to stop before
    the survivors are SIGKILLed: the scheduler gives its executors `executor_grace_secs`
    (they give their children less), and this gives the scheduler 10 s more."""
    return executor_grace_secs(config) + 10.0


def topology_processes(topology_id: str) -> list[psutil.Process]:
    """Every live process (other than this one) whose command line has ``--topology-id <id>``.

    Every daemon of a topology (scheduler service, executors, tmanager, stream managers,
    instances) carries that pair, so this finds them all, orphans included.
    """
    found = []
    for process in psutil.process_iter(["cmdline"]):
        argv: Sequence[str] = process.info.get("cmdline") or ()
        if process.pid == os.getpid() or "--topology-id" not in argv:
            continue
        if any(a == "--topology-id" and b == topology_id for a, b in itertools.pairwise(argv)):
            found.append(process)
    return found


def _alive(processes: Sequence[psutil.Process]) -> list[psutil.Process]:
    live = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                live.append(process)
        except psutil.NoSuchProcess:
            pass
    return live


def stop_topology_processes(
    topology_id: str,
    scheduler_pid: int | None,
    timeout: float,
    progress: Progress = quiet,
) -> None:
    """SIGTERM the topology's scheduler (or, without one, every process of the topology),
    wait until no process of the topology is left, and SIGKILL the survivors after
    ``timeout`` seconds (the topology's `stop_timeout_secs`).
    """
    processes = topology_processes(topology_id)
    scheduler = [p for p in processes if p.pid == scheduler_pid]
    targets = scheduler or processes
    if targets:
        progress(f"stopping {len(processes)} processes of {topology_id}")
    for process in targets:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.terminate()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = _alive(topology_processes(topology_id))
        if not live:
            return
        if scheduler and not _alive(scheduler):  # gone, yet processes remain: orphans
            scheduler = []
            for process in live:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.terminate()
        time.sleep(0.1)
    survivors = _alive(topology_processes(topology_id))
    progress(f"{len(survivors)} processes did not stop within {timeout:.0f} s: SIGKILL")
    for process in survivors:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(survivors, timeout=timeout)


def dispose_checkpoints(state: StateManager, name: str) -> None:
    """Delete every checkpoint of topology ``name`` from its state store, if it runs
    ``EFFECTIVELY_ONCE`` (best effort: a store that fails is logged, the kill goes on).

    The store is the one the topology's config names, so its plans are used only when
    ``state`` holds the topology's key and they pass their MAC check (else a tampered config
    could point the deletion anywhere): otherwise a warning says the checkpoints are left.
    Only the config's JSON values are read; nothing is unpickled.
    """
    if state.key_of(name) is None:
        unchecked = state.read_unverified(Kind.TOPOLOGY, name)
        if isinstance(unchecked, topology_pb2.Topology) and _effectively_once(unchecked):
            log.warning(
                "topology %r: its checkpoints were not deleted: without its key pair its "
                "config (which names the state store) cannot be trusted",
                name,
            )
        return
    try:
        topology = state.get_topology(name)
        packing = state.get_packing_plan(name)
    except StateAuthenticationError as exc:
        log.warning("topology %r: its checkpoints were not deleted: %s", name, exc)
        return
    if topology is None or packing is None:
        return
    config = json_config_from_proto(topology.topology_config)
    if not _effectively_once(topology):
        return
    tasks = [i.task_id for c in packing.containers for i in c.instances]
    try:
        store = create_state_store(config, name)
        try:
            store.dispose(tasks, "")
        finally:
            store.close()
    except Exception as exc:  # the kill must go on; the files are the user's to remove
        log.warning("topology %r: its checkpoints were not deleted: %s", name, exc)


def _effectively_once(topology: topology_pb2.Topology) -> bool:
    config = json_config_from_proto(topology.topology_config)
    return bool(config.get("topology.reliability.mode") == "EFFECTIVELY_ONCE")


def uninstall(state: StateManager, name: str, root: Path, *, keep_dir: bool = False) -> None:
    """Delete a topology's nodes in Heron's kill order (absent ones are skipped): tmanager
    location, packing plan, physical plan, scheduler location, execution state, stateful
    checkpoints, topology; then remove the containers' ipc directories and, unless
    ``keep_dir``, the working directory ``root``. An ``EFFECTIVELY_ONCE`` topology's
    checkpoints go too (from its state store: `dispose_checkpoints`)."""
    dispose_checkpoints(state, name)
    state.delete_tmanager_location(name)
    state.delete_packing_plan(name)
    state.delete_physical_plan(name)
    state.delete_scheduler_location(name)
    state.delete_execution_state(name)
    state.delete_stateful_checkpoints(name)
    state.delete_topology(name)
    for directory in ipc_dirs(root):
        shutil.rmtree(directory, ignore_errors=True)
    if not keep_dir:
        shutil.rmtree(root, ignore_errors=True)


def _authentic(state: StateManager, kind: Kind, name: str, progress: Progress) -> Message | None:
    """Node ``kind`` of topology ``name`` when ``state`` holds the topology's key and the
    node passes its MAC check; else None (a failure is reported through ``progress``)."""
    if state.key_of(name) is None:
        return None
    try:
        return state.read(kind, name)
    except StateAuthenticationError as exc:
        progress(f"warning: {exc}")
        return None


def kill(
    cluster: str,
    name: str,
    config_path: str | os.PathLike[str] | None = None,
    *,
    heron_home: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    progress: Progress = quiet,
) -> None:
    """Kill topology ``name`` on ``cluster``: stop all its processes (its scheduler service
    stops its containers, wherever they run), delete its state in Heron's kill order
    (tmanager location, packing plan, physical plan, scheduler location, execution state,
    stateful checkpoints, topology), delete the checkpoints of an EFFECTIVELY_ONCE topology
    from its state store, and remove its working directory. Nothing is unpickled, and a
    topology whose nodes fail authentication is killed too (see the module's docstring;
    each such node is reported through ``progress`` as a warning).

    ``overrides`` are ``key=value`` config overrides, e.g. the state manager's
    ``heron.statemgr.connection.string``.

    Raises:
        SchedulerError: no topology ``name`` (the message lists the running ones).
        ConfigurationError, StateManagerError: the cluster's config or state is unusable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     kill("local", "word_count", heron_home=home)
    Traceback (most recent call last):
    ...
    heron_core.errors.SchedulerError: no topology 'word_count' on cluster 'local'; \
topologies there: none
    """
    with cluster_state(cluster, config_path, heron_home=heron_home, overrides=overrides) as (
        config,
        state,
    ):
        unchecked = stored_topology(state, cluster, name)  # read before the key is held
        try:
            hold_key(state, config, cluster, name)
        except ConfigurationError as exc:
            progress(f"warning: {exc}; its nodes cannot be authenticated")
        topology = _authentic(state, Kind.TOPOLOGY, name, progress)
        execution = _authentic(state, Kind.EXECUTION_STATE, name, progress)
        location = state.read_unverified(Kind.SCHEDULER_LOCATION, name)
        assert topology is None or isinstance(topology, topology_pb2.Topology)
        assert execution is None or isinstance(execution, execution_state_pb2.ExecutionState)
        assert location is None or isinstance(location, scheduler_pb2.SchedulerLocation)
        if topology is not None:
            topology_id = topology.id
            timeout = stop_timeout_secs(json_config_from_proto(topology.topology_config))
        else:  # the id only picks which processes carrying --topology-id to stop
            topology_id = execution.topology_id if execution is not None else unchecked.id
            timeout = stop_timeout_secs(config)
        root = working_dir(config, cluster, name)
        if execution is not None and execution.working_directory:
            root = Path(execution.working_directory)
        stop_topology_processes(
            topology_id, location.pid if location is not None else None, timeout, progress
        )
        if location is not None:
            launched.reap(location.pid)
        progress(f"deleting the state and the working directory of {name!r}")
        uninstall(state, name, root)
    progress(f"killed {name!r} on {cluster!r}")
