"""Storm's ``ShellBolt`` and ``ShellSpout`` (``org.apache.storm.task`` / ``.spout``), run by the
kernel's multilang host."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from heron_core.config import setting
from heron_core.multilang import ShellBoltHost, ShellSpoutHost
from storm_compat.spout import SpoutOutputCollector
from storm_compat.task import OutputCollector, TopologyContext
from storm_compat.topology import IRichBolt, IRichSpout
from storm_compat.tuple import Tuple

__all__ = ["ShellBolt", "ShellSpout"]

SERIALIZER_KEY = "topology.multilang.serializer"


def _argv(owner: str, command: tuple[Any, ...]) -> tuple[str, ...]:
    """Storm's constructor forms: ``(*argv)``, ``(argv_list)`` or ``(ShellComponent)``."""
    if len(command) == 1 and hasattr(command[0], "execution_command"):
        component = command[0]
        argv: tuple[Any, ...] = (component.execution_command, component.script)
    elif len(command) == 1 and isinstance(command[0], list | tuple):
        argv = tuple(command[0])
    else:
        argv = command
    if not argv or not all(isinstance(arg, str) for arg in argv):
        raise TypeError(
            f"{owner} needs a command: strings, one list of strings or a ShellComponent, "
            f"got {command!r}"
        )
    return argv


class _Shell:
    """What both share: the command, ``setEnv`` and ``changeChildCWD``."""

    def __init__(self, *command: str | Sequence[str]) -> None:
        self.command = _argv(type(self).__name__, command)
        self._env: dict[str, str] = {}
        self._change_dir = True

    def setEnv(self, env: Mapping[str, str]) -> Any:
        """Variables added to the subprocess's environment; returns this component."""
        self._env = dict(env)
        return self

    def shouldChangeChildCWD(self) -> bool:
        """Whether the subprocess runs in the topology's code directory (the default)."""
        return self._change_dir

    def changeChildCWD(self, changeDirectory: bool) -> None:
        """False: the subprocess runs in the task's working directory instead of the code
        directory. Storm's worker runs elsewhere (beside its blob-store links); an instance
        here runs in the code directory itself, so both choices give the same directory."""
        self._change_dir = changeDirectory

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """No component config unless a subclass overrides it."""
        return None

    def _host_options(self, conf: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "serializer": setting(conf, SERIALIZER_KEY),
            "cwd": None if self._change_dir else Path.cwd(),
            "env": self._env,
        }


class _OutputCollectorShim:
    """The host's bolt collector over Storm's ``OutputCollector`` (inputs are Storm tuples)."""

    def __init__(self, collector: OutputCollector) -> None:
        self._out = collector

    def emit(
        self,
        tup: list[Any],
        stream: str,
        anchors: Sequence[Tuple] | None,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        anchored = list(anchors or ())
        if direct_task is not None:
            self._out.emitDirect(direct_task, stream, anchored, tup)
            return None
        return self._out.emit(stream, anchored, tup)

    def ack(self, tup: Tuple) -> None:
        self._out.ack(tup)

    def fail(self, tup: Tuple) -> None:
        self._out.fail(tup)


class _SpoutCollectorShim:
    """The host's spout collector over Storm's ``SpoutOutputCollector``."""

    def __init__(self, collector: SpoutOutputCollector) -> None:
        self._out = collector

    def emit(
        self,
        tup: Sequence[Any],
        tup_id: Any,
        stream: str,
        direct_task: int | None,
        need_task_ids: bool,
    ) -> list[int] | None:
        if direct_task is not None:
            self._out.emitDirect(direct_task, stream, tup, tup_id)
            return None
        return self._out.emit(stream, tup, tup_id)


class ShellBolt(_Shell, IRichBolt):
    """A bolt whose code is a subprocess speaking Storm's multilang protocol.

    Subclass it, pass the command to the constructor and declare the outputs, as in Storm.
    The serializer is ``topology.multilang.serializer`` (``json`` or ``msgpack``); the
    subprocess runs in the topology's code directory (see ``changeChildCWD``), its stderr goes
    to the task's log, and it acks, fails and anchors by itself. Protocol semantics, timeouts
    and failures are those of ``heron_core.multilang.ShellBoltHost``.

    >>> from storm_compat.topology import TopologyBuilder
    >>> from storm_compat.testing import TestWordSpout
    >>> from storm_compat.tuple import Fields
    >>> class SplitSentence(ShellBolt):
    ...     def __init__(self):
    ...         super().__init__("python3", "splitsentence.py")
    ...     def declareOutputFields(self, declarer):
    ...         declarer.declare(Fields("word"))
    >>> builder = TopologyBuilder()
    >>> _ = builder.setSpout("sentences", TestWordSpout())
    >>> _ = builder.setBolt("split", SplitSentence(), 8).shuffleGrouping("sentences")
    >>> [c.streams for c in builder.createTopology().components if c.id == "split"]
    [(Stream(fields=('word',), name='default', direct=False),)]
    """

    def prepare(
        self, topoConf: dict[str, Any], context: TopologyContext, collector: OutputCollector
    ) -> None:
        """Start the subprocess and do the handshake."""
        self._host: ShellBoltHost[Tuple] = ShellBoltHost(
            self.command, **self._host_options(topoConf)
        )
        self._host.start(topoConf, context.native, _OutputCollectorShim(collector))

    def execute(self, input: Tuple) -> None:
        """Hand ``input`` (tick tuples included) to the subprocess; returns once it is handled."""
        self._execute_batch((input,))

    def _execute_batch(
        self,
        inputs: Sequence[Tuple],
        due: list[bool] | None = None,
        serve: Callable[[], None] | None = None,
    ) -> None:
        """Hand ``inputs`` to the subprocess pipelined (``ShellBoltHost.execute_batch``);
        returns once it has handled every one. The bolt adapter calls it instead of
        ``execute`` per input unless a subclass overrides ``execute``."""
        self._host.execute_batch(
            (
                (
                    tup,
                    tup.getSourceComponent(),
                    tup.getSourceStreamId(),
                    tup.getSourceTask(),
                    tup.getValues(),
                )
                for tup in inputs
            ),
            due,
            serve,
        )

    def cleanup(self) -> None:
        """Stop the subprocess."""
        if hasattr(self, "_host"):
            self._host.close()


class ShellSpout(_Shell, IRichSpout):
    """A spout whose code is a subprocess speaking Storm's multilang protocol.

    Subclass it, pass the command to the constructor and declare the outputs. ``nextTuple``,
    ``ack``, ``fail``, ``activate`` and ``deactivate`` each return at the subprocess's
    ``sync``; otherwise as :class:`ShellBolt`.
    """

    def open(
        self, conf: dict[str, Any], context: TopologyContext, collector: SpoutOutputCollector
    ) -> None:
        """Start the subprocess and do the handshake."""
        self._host = ShellSpoutHost(self.command, **self._host_options(conf))
        self._host.start(conf, context.native, _SpoutCollectorShim(collector))

    def nextTuple(self) -> None:
        """Ask the subprocess for tuples."""
        self._host.next_tuple()

    def ack(self, msgId: Any) -> None:
        """Tell the subprocess the tree of ``msgId`` completed."""
        self._host.ack(msgId)

    def fail(self, msgId: Any) -> None:
        """Tell the subprocess the tree of ``msgId`` failed."""
        self._host.fail(msgId)

    def activate(self) -> None:
        """Tell the subprocess the topology was activated."""
        self._host.activate()

    def deactivate(self) -> None:
        """Tell the subprocess the topology was deactivated."""
        self._host.deactivate()

    def close(self) -> None:
        """Stop the subprocess."""
        if hasattr(self, "_host"):
            self._host.close()
