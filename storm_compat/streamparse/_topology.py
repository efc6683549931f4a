"""A streamparse ``Topology`` class as a logical plan, through its thrift ``StormTopology``.

streamparse declares Python components as shell components running
``streamparse_run [-s SERIALIZER] pkg.module.Class``. Those run in-process by default (a
`PystormSpoutAdapter` / `PystormBoltAdapter` pickled into a ``PythonSpec``), or as real multilang
subprocesses when the component config sets ``streamparse.multilang`` or when asked for all
components. Other shell components always run as multilang subprocesses.
"""

from __future__ import annotations

import copy
import json
import pickle
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pystorm.bolt import TicklessBatchingBolt

from heron_core.client import LoadedTopology
from heron_core.config import parse_override
from heron_core.errors import ConfigurationError, TopologyValidationError
from heron_core.plan import ComponentDef, LogicalPlan, PythonSpec, ShellSpec
from storm_compat.streamparse._adapter import PystormBoltAdapter, PystormSpoutAdapter
from storm_compat.streamparse._project import SparseProject
from storm_compat.thrift import (
    SERIALIZER_KEY,
    ShellCommand,
    ShellMapper,
    multilang_spec,
    storm_thrift,
    topology_to_plan,
)

__all__ = [
    "MULTILANG_KEY",
    "RUN_MODULE",
    "load_file",
    "load_sparse_topology",
    "pystorm_log_path",
    "sparse_options",
    "streamparse_object",
    "streamparse_shell",
    "topology_class_plan",
]

MULTILANG_KEY = "streamparse.multilang"
"""Component config key: true runs a streamparse component as a multilang subprocess."""

RUN_MODULE = "storm_compat.streamparse.run"
"""The module multilang subprocesses run (streamparse_run with the project's ``src/``)."""

_COMMAND = "streamparse_run"
_TICK_KEY = "topology.tick.tuple.freq.secs"
_VIRTUALENV_OPTIONS = (
    "install_virtualenv",
    "use_virtualenv",
    "virtualenv_flags",
    "virtualenv_root",
    "virtualenv_name",
)
_ADAPTERS = {True: PystormSpoutAdapter, False: PystormBoltAdapter}


def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_ADAPTER_PATHS = {_path(cls) for cls in _ADAPTERS.values()}


def _streamparse_target(command: ShellCommand) -> tuple[str, str | None] | None:
    """``(class path, -s serializer or None)`` of a ``streamparse_run`` command, else None."""
    if Path(command.execution_command).name != _COMMAND:
        return None
    words = command.script.split()
    serializer = None
    rest = []
    while words:
        word = words.pop(0)
        if word in ("-s", "--serializer") and words:
            serializer = words.pop(0)
        elif word.startswith("--serializer="):
            serializer = word.partition("=")[2]
        else:
            rest.append(word)
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return rest[0], serializer


def _runs_as_subprocess(config: Mapping[str, Any], multilang: bool) -> bool:
    return multilang or bool(config.get(MULTILANG_KEY))


def streamparse_shell(
    components: Sequence[str], *, multilang: bool = False, python: str = sys.executable
) -> ShellMapper:
    """The `ShellMapper` of a streamparse topology.

    Args:
        components: every component of the topology (in-process components need them for
            Storm's handshake context).
        multilang: run every ``streamparse_run`` component as a multilang subprocess.
        python: the interpreter of such subprocesses (``python -m`` `RUN_MODULE`).

    >>> shell = streamparse_shell(["words", "count"], python="python3")
    >>> shell(ShellCommand("words", True, "streamparse_run", "spouts.W", "json", {})).class_path
    'storm_compat.streamparse._adapter:PystormSpoutAdapter'
    >>> shell(ShellCommand("count", False, "streamparse_run", "-s json bolts.C", "json",
    ...                    {"streamparse.multilang": True}))
    ShellSpec(command=('python3', '-m', 'storm_compat.streamparse.run', '-s', 'json', \
'bolts.C'), serializer='json')
    """
    names = tuple(components)

    def shell(command: ShellCommand) -> PythonSpec | ShellSpec:
        target = _streamparse_target(command)
        if target is None:
            return multilang_spec(command)
        class_path, serializer = target
        if _runs_as_subprocess(command.config, multilang):
            serializer = serializer or command.serializer
            argv = (python, "-m", RUN_MODULE, "-s", serializer, class_path)
            return ShellSpec(argv, serializer)
        adapter = _ADAPTERS[command.is_spout](class_path, names)
        return PythonSpec(_path(type(adapter)), pickle.dumps(adapter))

    return shell


def streamparse_object(component: ComponentDef) -> Any:
    """The thrift ``ComponentObject`` (``streamparse_run <class>``) of a component made by
    `streamparse_shell`, None for any other (an ``ObjectMapper`` for ``plan_to_topology``)."""
    st = storm_thrift()
    spec = component.spec
    script: str | None = None
    if isinstance(spec, PythonSpec) and spec.class_path in _ADAPTER_PATHS:
        script = pickle.loads(spec.pickled_object).class_path
    elif isinstance(spec, ShellSpec) and spec.command[1:3] == ("-m", RUN_MODULE):
        script = " ".join(spec.command[3:])
    if script is None:
        return None
    return st.ComponentObject(shell=st.ShellComponent(_COMMAND, script))


def topology_class_plan(
    topology_class: Any,
    name: str,
    config: Mapping[str, Any] | None = None,
    *,
    env_name: str | None = None,
    multilang: bool = False,
    python: str = sys.executable,
) -> LogicalPlan:
    """The validated plan of a streamparse ``Topology`` subclass.

    Per-environment parallelism (``par={"prod": 4}``) takes the value of ``env_name``.
    In-process ``TicklessBatchingBolt`` components without a tick frequency get tick tuples
    every ``secs_between_batches`` (their batches are processed on the instance's thread).

    Raises:
        TopologyValidationError: a Java component, a parallelism dict without ``env_name``,
            or an invalid topology.
    """
    topology = copy.deepcopy(topology_class.thrift_topology)
    config = dict(config or {})
    tickless = {
        spec.name: spec.component_cls.secs_between_batches
        for spec in topology_class.specs
        if issubclass(spec.component_cls, TicklessBatchingBolt)
    }
    for table in (topology.spouts, topology.bolts):
        for cid, component in table.items():
            common = component.common
            par = common.parallelism_hint
            if isinstance(par, dict):
                if env_name not in par:
                    raise TopologyValidationError(
                        name,
                        cid,
                        f"parallelism is per environment ({', '.join(par)}) and the environment "
                        f"is {env_name!r}: choose one with -e ENV",
                    )
                common.parallelism_hint = par[env_name]
            if cid in tickless:
                own = json.loads(common.json_conf or "{}")
                if _TICK_KEY not in own and not _runs_as_subprocess(own, multilang):
                    own[_TICK_KEY] = config.get(_TICK_KEY) or tickless[cid]
                    common.json_conf = json.dumps(own)
    names = [*topology.spouts, *topology.bolts]
    shell = streamparse_shell(names, multilang=multilang, python=python)
    return topology_to_plan(topology, name, config, shell=shell)


def sparse_options(
    project: SparseProject,
    env: Mapping[str, Any],
    topology_config: Mapping[str, Any],
    options: Mapping[str, Any],
    *,
    local: bool,
) -> dict[str, Any]:
    """The topology config, resolved as streamparse's ``resolve_options`` does: the
    environment's ``options`` < the topology class's ``config`` < ``options`` (the command
    line), plus the ``pystorm.log.*`` keys of the environment's ``log``, its virtualenv keys,
    ``sudo_user``, ``storm.workers.list`` and the worker and acker counts (one per worker of
    the environment; ``local``, as ``sparse run``, forces one worker and at most one acker);
    the serializer of ``config.json`` becomes
    ``topology.multilang.serializer``. ``topology.python.path`` is not set (there is no
    virtualenv to point at). For a ``local`` run, a relative ``pystorm.log.path`` is taken
    from the project directory (where ``config.json`` is), made absolute (pystorm would take
    it from the component's working directory, a copy of the code that a run removes).

    >>> project = SparseProject(Path("/p"), {"topology_specs": "topologies/"}, Path("/p/c.json"))
    >>> resolved = sparse_options(project, {"log": {"level": "INFO"}}, {"topology.debug": True},
    ...                           {}, local=True)
    >>> resolved["pystorm.log.level"], resolved["topology.workers"]
    ('debug', 1)
    """
    resolved: dict[str, Any] = dict(env.get("options") or {})
    log_config = env.get("log") or {}
    log_path = log_config.get("path") or env.get("log_path")
    log_file = log_config.get("file") or env.get("log_file")
    if log_path:
        resolved["pystorm.log.path"] = log_path
    if log_file:
        resolved["pystorm.log.file"] = log_file
    for key in ("max_bytes", "backup_count"):
        if isinstance(log_config.get(key), int):
            resolved[f"pystorm.log.{key}"] = log_config[key]
    if isinstance(log_config.get("level"), str):
        resolved["pystorm.log.level"] = log_config["level"].lower()
    for key in _VIRTUALENV_OPTIONS:
        if key in env:
            resolved[key] = env[key]
    resolved["sudo_user"] = env.get("user")
    serializer = project.serializer(env)
    if serializer is not None:
        resolved[SERIALIZER_KEY] = serializer
    resolved.update(topology_config)
    resolved.update(options)
    if resolved.get("topology.debug"):
        resolved["pystorm.log.level"] = "debug"
    workers = [] if local else list(env.get("workers") or [])
    resolved["storm.workers.list"] = workers
    for key in ("topology.acker.executors", "topology.workers"):
        if resolved.get(key) is None:
            resolved[key] = len(workers) or 1
    if local:  # sparse run: one worker; acking stays as asked (0 = off)
        resolved["topology.workers"] = 1
        if resolved["topology.acker.executors"] != 0:
            resolved["topology.acker.executors"] = 1
        if resolved.get("pystorm.log.path"):
            resolved["pystorm.log.path"] = str(project.root / str(resolved["pystorm.log.path"]))
    return resolved


def pystorm_log_path(config: Mapping[str, Any]) -> Path | None:
    """The directory ``pystorm.log.path`` of a resolved topology config names (None when
    unset), checked as pystorm would need it: it must exist, since pystorm does not create
    it (its ``RotatingFileHandler`` fails with ``FileNotFoundError`` in every component).

    Raises:
        ConfigurationError: it does not exist or is not a directory; the message says
            where the setting comes from and what to do.

    >>> pystorm_log_path({}) is None
    True
    >>> pystorm_log_path({"pystorm.log.path": "/nonexistent/logs"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: the log path /nonexistent/logs (...) does not exist. ...
    """
    value = config.get("pystorm.log.path")
    if not value:
        return None
    path = Path(str(value))
    if not path.is_dir():
        problem = "is not a directory" if path.exists() else "does not exist"
        raise ConfigurationError(
            f'the log path {path} (config.json\'s "log": {{"path": ...}} of the '
            f"environment, or -o pystorm.log.path) {problem}. pystorm does not create it: "
            "every Python component would fail at start with FileNotFoundError. Create it "
            f"(mkdir -p {path}), or remove the setting to keep the components' logs with the "
            "topology's (heron shows them as they are written)."
        )
    return path


def load_sparse_topology(
    project: SparseProject,
    name: str | None = None,
    env: str | None = None,
    options: Sequence[str] = (),
    *,
    debug: bool = False,
    multilang: bool = False,
    local: bool = True,
    override_name: str | None = None,
) -> LoadedTopology:
    """A project's topology, ready for ``heron_core.client.run`` / ``submit``.

    Args:
        project: the project.
        name: the topology file's stem, also the topology's name (default: the only file).
        env: the environment of ``config.json`` (default: the only one).
        options: ``key=value`` options (``sparse -o``), values typed as the config registry
            says (JSON for other keys).
        debug: sets ``topology.debug`` (``sparse -d``).
        multilang: run every streamparse component as a multilang subprocess.
        local: resolve the options for a local run (one worker) rather than for the
            environment's workers.
        override_name: the topology's name instead of the file's stem (``sparse -N``).

    Raises:
        ConfigurationError: no such topology file or environment, or a bad option.
        UserCodeError: importing the topology file raised.
        TopologyValidationError: as `topology_class_plan`.
    """
    topology_name, path = project.topology_file(name)
    env_name, env_config = project.environment(env)
    cli = dict(parse_override(text) for text in options)
    if debug:
        cli["topology.debug"] = True
    return load_file(
        project,
        path,
        override_name or topology_name,
        env_name,
        env_config,
        cli,
        multilang=multilang,
        local=local,
    )


def load_file(
    project: SparseProject,
    path: Path,
    name: str,
    env_name: str | None,
    env_config: Mapping[str, Any],
    cli: Mapping[str, Any] | None = None,
    *,
    multilang: bool = False,
    local: bool = True,
) -> LoadedTopology:
    """The topology of the file ``path`` of ``project``, named ``name``, with the options of
    environment ``env_name`` (``env_config``) and the command line's (``cli``). Its code
    directory is a copy of the project's ``src/`` (`SparseProject.code_root`)."""
    topology_class: Any = project.import_topology_class(path)
    config = sparse_options(project, env_config, topology_class.config, cli or {}, local=local)
    plan = topology_class_plan(topology_class, name, config, env_name=env_name, multilang=multilang)
    return LoadedTopology(plan, project.code_root, f"{path}:{topology_class.__name__}")
