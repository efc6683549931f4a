"""Native spouts and bolts whose user code is a multilang subprocess."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from heron_core.api import Bolt, InputBatch, Spout, Stream, Tuple
from heron_core.api import TopologyContext as NativeContext
from heron_core.multilang._hosts import ShellBoltHost, ShellSpoutHost
from heron_core.multilang._process import IdleFailureHandler

__all__ = ["ShellBolt", "ShellSpout"]


class _ShellOptions:
    """What both shell components are built from (arguments documented on ShellBolt)."""

    outputs: Sequence[str | Stream]

    def __init__(
        self,
        command: Sequence[str],
        serializer: str = "json",
        outputs: Sequence[str | Stream] = (),
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        on_idle_failure: IdleFailureHandler | None = None,
    ) -> None:
        self.command = tuple(command)
        self.serializer = serializer
        self.outputs = list(outputs)
        self.cwd = cwd
        self.env = env
        self.on_idle_failure = on_idle_failure


class ShellBolt(_ShellOptions, Bolt):
    """A bolt run by a subprocess speaking Storm's multilang protocol (a ``storm.py`` or
    pystorm bolt, or any other language's).

    The subprocess starts in ``initialize`` (cwd: the topology's code directory; stderr: the
    instance's log) and stops at ``close`` or when the process exits. The inputs of a batch go to
    the subprocess pipelined, up to ``topology.shellbolt.max.pending`` in flight, and
    ``process_batch`` returns once it has handled them (``process`` and ``process_tick`` hand
    one tuple over and return once the subprocess has handled it); its
    emits, acks, fails and anchors go through this bolt's collector (acking is up to the
    subprocess, as in Storm). Heartbeats are sent as Storm sends them; a subprocess that
    exits or stays silent for ``topology.subprocess.timeout.secs`` raises UserCodeError (the
    instance exits and is restarted, and the subprocess with it).

    Args:
        command: the argv, e.g. ``["python3", "splitsentence.py"]``.
        serializer: ``"json"`` or ``"msgpack"``.
        outputs: the declared outputs, as ``Bolt.outputs``.
        cwd: the subprocess's working directory (default: the topology's code directory).
        env: variables added to its environment (after ``topology.environment``).
        on_idle_failure: see ``ShellBoltHost``.

    >>> from heron_core.api import TopologyBuilder, shell_component
    >>> builder = TopologyBuilder("split")
    >>> lines = builder.add_spout("lines", shell_component(["python3", "lines.py"], ["line"]))
    >>> _ = builder.add_bolt("split", ShellBolt(["python3", "split.py"], outputs=["word"]),
    ...                      inputs=[lines])
    >>> builder.build().component("split").outputs[0].fields
    ('word',)
    """

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        self.host: ShellBoltHost[Tuple] = ShellBoltHost(
            self.command,
            self.serializer,
            cwd=self.cwd,
            env=self.env,
            on_idle_failure=self.on_idle_failure,
        )
        self.host.start(config, context, self._collector)

    def process(self, tup: Tuple) -> None:
        self.host.execute(tup, tup.component, tup.stream, tup.task, tup.values)

    def process_batch(self, batch: InputBatch) -> None:
        """A batch's inputs go to the subprocess pipelined (``ShellBoltHost.execute_batch``);
        returns once it has handled every one."""
        self.host.execute_batch(
            ((tup, tup.component, tup.stream, tup.task, tup.values) for tup in batch.tuples()),
            batch.due,
            batch.serve,
        )

    def process_tick(self, tup: Tuple) -> None:
        """Ticks go to the subprocess like any tuple (from ``__system`` on ``__tick``)."""
        self.host.execute(tup, tup.component, tup.stream, tup.task, tup.values)

    def close(self) -> None:
        if hasattr(self, "host"):
            self.host.close()


class ShellSpout(_ShellOptions, Spout):
    """A spout run by a subprocess speaking Storm's multilang protocol.

    ``next_tuple``, ``ack``, ``fail``, ``activate`` and ``deactivate`` send the matching
    command and return at the subprocess's ``sync``; its emits go through this spout's
    collector (message ids as the subprocess gives them). Arguments, start, stop and failures
    as for :class:`ShellBolt`.
    """

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        self.host = ShellSpoutHost(
            self.command,
            self.serializer,
            cwd=self.cwd,
            env=self.env,
            on_idle_failure=self.on_idle_failure,
        )
        self.host.start(config, context, self._collector)

    def next_tuple(self) -> None:
        self.host.next_tuple()

    def ack(self, tup_id: Any) -> None:
        self.host.ack(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.host.fail(tup_id)

    def activate(self) -> None:
        self.host.activate()

    def deactivate(self) -> None:
        self.host.deactivate()

    def close(self) -> None:
        if hasattr(self, "host"):
            self.host.close()
