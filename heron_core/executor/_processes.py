"""The processes one container needs, derived from the packing plan (a pure function)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heron_core._daemon_flags import DaemonFlags
from heron_core.errors import SchedulerError
from heron_core.proto import packing_plan_pb2

__all__ = [
    "STATE_KEYS",
    "DaemonContext",
    "ProcessSpec",
    "code_dir",
    "create_ipc_dir",
    "desired_processes",
    "instance_name",
    "ipc_dir",
    "ipc_dirs",
    "remove_ipc_dir",
    "state_config_json",
    "stmgr_name",
]

TMANAGER = "tmanager"

STATE_KEYS = (
    "heron.class.state.manager",
    "heron.statemgr.connection.string",
    "heron.statemgr.root.path",
    "heron.statemgr.zookeeper.session.timeout.ms",
    "heron.statemgr.zookeeper.connection.timeout.ms",
    "heron.statemgr.zookeeper.auth.file",
)
"""The resolved-config keys daemons receive as ``--state-config``."""


def state_config_json(config: Mapping[str, Any]) -> str:
    """The ``--state-config`` value: the `STATE_KEYS` present in ``config``, as a JSON object.

    >>> state_config_json({"heron.class.state.manager": "localfs", "topology.stmgrs": 2})
    '{"heron.class.state.manager": "localfs"}'
    """
    return json.dumps({key: config[key] for key in STATE_KEYS if key in config}, sort_keys=True)


_IPC_BASE_MAX = 40  # zmq ipc paths must stay under ~100 characters
_IPC_PREFIX = "heron-"
_IPC_RECORD = "ipc-{container}.path"


def _ipc_base() -> Path:
    base = tempfile.gettempdir()
    return Path(base if len(base) <= _IPC_BASE_MAX else "/tmp")


def _ipc_record(working_dir: Path, container: int) -> Path:
    """Where container ``container``'s executor records its ipc directory: ``W/ipc-K.path``."""
    return working_dir / _IPC_RECORD.format(container=container)


def _ours(path: Path) -> bool:
    """Whether ``path`` is an ipc directory this user made: a real directory (never a symlink:
    ``lstat``), owned by this user, mode 0700, named ``heron-...``, directly in the ipc base."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and stat.S_IMODE(st.st_mode) == 0o700
        and path.name.startswith(_IPC_PREFIX)
        and path.parent == _ipc_base()
    )


def _recorded(record: Path) -> Path | None:
    try:
        text = record.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return Path(text) if text else None


def create_ipc_dir(working_dir: Path, container: int) -> Path:
    """A fresh private directory for container ``container``'s ipc sockets, recorded in
    ``W/ipc-<container>.path``.

    The directory recorded by a previous executor of the container (one killed before it
    could clean up) is removed first (`remove_ipc_dir`). The new one is made by
    `tempfile.mkdtemp` (an unpredictable name, created atomically, so nobody can have made it
    first) in a short base directory (``$TMPDIR`` when short, else ``/tmp``: a zmq ipc path
    must stay under ~100 characters), and it is checked to be a real directory owned by this
    user with mode 0700.

    Raises:
        SchedulerError: the directory cannot be made or recorded, or is not private.

    >>> import tempfile
    >>> w = Path(tempfile.mkdtemp())
    >>> first = create_ipc_dir(w, 1)
    >>> ipc_dir(w, 1) == first and oct(first.stat().st_mode & 0o777)
    '0o700'
    >>> second = create_ipc_dir(w, 1)  # a successor removes its predecessor's
    >>> first.exists(), second == ipc_dir(w, 1) != first, len(str(second)) < 60
    (False, True, True)
    >>> remove_ipc_dir(w, 1); second.exists(), ipc_dirs(w)
    (False, [])
    """
    where = f"container {container}'s ipc directory"
    remove_ipc_dir(working_dir, container)
    base = _ipc_base()
    try:
        path = Path(tempfile.mkdtemp(prefix=_IPC_PREFIX, dir=base))
        os.chmod(path, 0o700)  # mkdtemp's mode, whatever the umask took away
    except OSError as exc:
        raise SchedulerError(f"cannot create {where} in {base}: {exc}") from None
    if not _ours(path):
        raise SchedulerError(f"{where} {path} is not a directory of this user with mode 0700")
    record = _ipc_record(working_dir, container)
    partial = record.with_name(record.name + ".tmp")
    try:
        partial.write_text(str(path), encoding="utf-8")
        partial.replace(record)
    except OSError as exc:
        shutil.rmtree(path, ignore_errors=True)
        raise SchedulerError(f"cannot record {where} in {record}: {exc}") from None
    return path


def remove_ipc_dir(working_dir: Path, container: int) -> None:
    """Remove the ipc directory recorded for container ``container`` and its record.

    The directory is removed only if it is one this user made (a real directory, not a
    symlink, owned by this user, mode 0700, named ``heron-...`` in the ipc base); anything
    else the record names is left alone. Never raises for a missing record or directory.
    """
    record = _ipc_record(working_dir, container)
    path = _recorded(record)
    if path is not None and _ours(path):
        shutil.rmtree(path, ignore_errors=True)  # rmtree never follows a symlink
    record.unlink(missing_ok=True)


def ipc_dir(working_dir: Path, container: int) -> Path | None:
    """The ipc directory recorded for container ``container`` (see `create_ipc_dir`), or
    None when there is none or it is not one this user made."""
    path = _recorded(_ipc_record(working_dir, container))
    return path if path is not None and _ours(path) else None


def ipc_dirs(working_dir: Path) -> list[Path]:
    """The ipc directories recorded in ``working_dir`` by its containers' executors that
    exist and are this user's: what whoever removes the topology removes for executors that
    could not."""
    found = []
    for record in sorted(working_dir.glob(_IPC_RECORD.format(container="*"))):
        path = _recorded(record)
        if path is not None and _ours(path):
            found.append(path)
    return found


def code_dir(working_dir: str | Path) -> Path:
    """The topology's code directory ``W/code``: the working directory of every instance
    process, and so of every multilang subprocess an instance starts.

    It holds the copy of the topology's code root, which stands for what a Storm worker gets
    as its ``resources`` directory (a shell component's cwd there): a relative path a
    component opens is looked up in it, on every front end.

    >>> code_dir("/w")
    PosixPath('/w/code')
    """
    return Path(working_dir) / "code"


def stmgr_name(container: int) -> str:
    """The process name (and stmgr id) of container ``container``'s stream manager.

    >>> stmgr_name(3)
    'stmgr-3'
    """
    return f"stmgr-{container}"


def instance_name(container: int, component: str, task_id: int) -> str:
    """The process name (and instance id) of one task.

    >>> instance_name(1, "word", 4)
    'container_1_word_4'
    """
    return f"container_{container}_{component}_{task_id}"


@dataclass(frozen=True)
class ProcessSpec:
    """One process an executor keeps running.

    Attributes:
        name: the process name, which also names its log file (``W/logs/<name>.log``).
        argv: the full command line.
        depends_on: the name of a process this one is bound to (an instance to its stream
            manager's sockets): while that process is not running this one is stopped, and it
            is restarted whenever that process restarts.
        cwd: the directory it starts in; None: the topology's working directory W.
        pass_fds: descriptors of the executor's the process inherits (the shell's listening
            socket, for the metrics manager).
    """

    name: str
    argv: tuple[str, ...]
    depends_on: str | None = None
    cwd: str | None = None
    pass_fds: tuple[int, ...] = ()


@dataclass(frozen=True)
class DaemonContext:
    """What every daemon command line of one container carries.

    Attributes:
        topology_name: the topology's name.
        topology_id: the topology's id.
        cluster: the cluster name.
        working_dir: the topology's working directory W.
        state_config: the ``--state-config`` JSON object (state-manager keys).
        local_endpoint: the ipc endpoint prefix of the container's stream manager
            (e.g. ``"ipc:///tmp/heron-ab12cd/"``); unused by container 0.
        command_prefix: the argv that runs a daemon module; the module name follows it.
            By default this Python with ``-m``; tests point it at a fake daemon.
        host: the address the container's tmanager or stream manager binds and registers in
            the state manager (``--host``); "" leaves the daemons' default (127.0.0.1).
        shell_port: the TCP port of the container's shell (served by its metrics manager,
            advertised by its stream manager in the physical plan); 0: none chosen.
        shell_fd: the executor's listening socket on ``shell_port``, which the metrics
            manager inherits and serves on (so the port stays the container's across its
            restarts); -1: none, the metrics manager binds ``shell_port`` itself.
    """

    topology_name: str
    topology_id: str
    cluster: str
    working_dir: str
    state_config: str
    local_endpoint: str = ""
    command_prefix: tuple[str, ...] = (sys.executable, "-m")
    host: str = ""
    shell_port: int = 0
    shell_fd: int = -1

    def host_flags(self) -> tuple[str, ...]:
        """``("--host", host)`` for the tmanager and the stream manager, or ``()``."""
        return ("--host", self.host) if self.host else ()

    def command(self, module: str, *args: str) -> tuple[str, ...]:
        """The argv running daemon ``module`` (``heron_core.<daemon>``) with ``args``."""
        return (*self.command_prefix, module, *args)

    def common_flags(self, container: int, state: bool = True) -> tuple[str, ...]:
        """The topology flags of a daemon in ``container`` (with ``state``: with the state
        manager's keys)."""
        flags = DaemonFlags(
            self.topology_name,
            self.topology_id,
            self.cluster,
            self.working_dir,
            container,
            self.state_config if state else None,
        )
        return tuple(flags.argv())


def desired_processes(
    plan: packing_plan_pb2.PackingPlan, container: int, context: DaemonContext
) -> dict[str, ProcessSpec]:
    """The processes container ``container`` runs, by name, in start order.

    Container 0 runs the topology manager. Container K >= 1 runs its metrics manager
    ``metricsmgr-K``, its stream manager ``stmgr-K`` and one instance per task of container K
    in ``plan`` (by task id), each depending on the stream manager and started in the code
    directory (`code_dir`); the daemons start in W, and bind the context's ``host`` when it is
    set. The metrics manager serves the shell on the context's ``shell_port``, which the
    stream manager advertises.

    Raises:
        SchedulerError: ``container`` is negative, or K >= 1 is not a container of ``plan``.

    >>> plan = packing_plan_pb2.PackingPlan(id="p", containers=[packing_plan_pb2.ContainerPlan(
    ...     id=1, instances=[packing_plan_pb2.InstancePlan(component_name="word", task_id=1)])])
    >>> ctx = DaemonContext("wc", "wc-1", "local", "/w", "{}", "ipc:///tmp/h/", ("py", "-m"))
    >>> list(desired_processes(plan, 1, ctx))
    ['metricsmgr-1', 'stmgr-1', 'container_1_word_1']
    >>> desired_processes(plan, 1, ctx)["container_1_word_1"].depends_on
    'stmgr-1'
    >>> [spec.cwd for spec in desired_processes(plan, 1, ctx).values()]
    [None, None, '/w/code']
    >>> on_host = DaemonContext("wc", "wc-1", "spark", "/w", "{}", "", ("py", "-m"), "10.0.0.5")
    >>> desired_processes(plan, 0, on_host)["tmanager"].argv[-2:]
    ('--host', '10.0.0.5')
    """
    if container == 0:
        argv = context.command(
            "heron_core.tmanager", *context.common_flags(0), *context.host_flags()
        )
        return {TMANAGER: ProcessSpec(TMANAGER, argv)}
    plans = {c.id: c for c in plan.containers}
    if container not in plans:
        known = ", ".join(str(c) for c in sorted(plans)) or "none"
        raise SchedulerError(
            f"topology {context.topology_name!r}: container {container} is not in packing plan "
            f"{plan.id!r} (containers: 0 for the tmanager, then {known})"
        )
    stmgr = stmgr_name(container)
    metricsmgr = f"metricsmgr-{container}"
    shell = ("--shell-port", str(context.shell_port))
    held = (context.shell_fd,) if context.shell_fd >= 0 else ()
    local = ("--local-endpoint", context.local_endpoint)
    specs = {
        metricsmgr: ProcessSpec(
            metricsmgr,
            context.command(
                "heron_core.metricsmgr",
                *context.common_flags(container),
                *local,
                *shell,
                *(("--shell-fd", str(context.shell_fd)) if held else ()),
                *context.host_flags(),
            ),
            pass_fds=held,
        ),
        stmgr: ProcessSpec(
            stmgr,
            context.command(
                "heron_core.stmgr",
                *context.common_flags(container),
                *local,
                *shell,
                *context.host_flags(),
            ),
        ),
    }
    code = str(code_dir(context.working_dir))
    for inst in sorted(plans[container].instances, key=lambda i: i.task_id):
        name = instance_name(container, inst.component_name, inst.task_id)
        argv = context.command(
            "heron_core.instance",
            *context.common_flags(container, state=False),
            "--task-id",
            str(inst.task_id),
            "--component",
            inst.component_name,
            "--component-index",
            str(inst.component_index),
            "--local-endpoint",
            context.local_endpoint,
        )
        specs[name] = ProcessSpec(name, argv, depends_on=stmgr, cwd=code)
    return specs
