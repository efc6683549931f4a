"""Flux's built-in wrappers (``org.apache.storm.flux.wrappers``): shell components whose
outputs are given in the YAML, and a bolt that logs what it receives."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from heron_core.api import DEFAULT_STREAM
from storm_compat.multilang import ShellBolt, ShellSpout
from storm_compat.topology import BasicOutputCollector, OutputFieldsDeclarer
from storm_compat.topology.base import BaseBasicBolt
from storm_compat.tuple import Fields, Tuple

__all__ = ["FluxShellBolt", "FluxShellSpout", "LogInfoBolt"]

log = logging.getLogger("storm_compat.flux.wrappers")


class _FluxShell:
    """Output streams and component config set from the YAML (``constructorArgs`` and
    ``configMethods``)."""

    def _setup(self, output_fields: Sequence[str] | None) -> None:
        self.outputFields: dict[str, list[str]] = {}
        self.componentConfig: dict[str, Any] | None = None
        if output_fields is not None:
            self.setDefaultStream(output_fields)

    def setDefaultStream(self, outputFields: Sequence[str]) -> None:
        """Declare the default stream with ``outputFields``."""
        self.setNamedStream(DEFAULT_STREAM, outputFields)

    def setNamedStream(self, name: str, outputFields: Sequence[str]) -> None:
        """Declare stream ``name`` with ``outputFields``."""
        if isinstance(outputFields, str):
            raise TypeError(f"stream {name!r}: output fields must be a list, got {outputFields!r}")
        self.outputFields[name] = list(outputFields)

    def addComponentConfig(self, key: str, value: Any) -> None:
        """Set ``key`` in this component's config."""
        if self.componentConfig is None:
            self.componentConfig = {}
        self.componentConfig[key] = value

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """Declare the streams set so far."""
        for stream, fields in self.outputFields.items():
            declarer.declareStream(stream, Fields(fields))

    def getComponentConfiguration(self) -> dict[str, Any] | None:
        """The config set with ``addComponentConfig`` (None if none)."""
        return self.componentConfig


def _command(args: tuple[Any, ...]) -> tuple[tuple[str, ...], Sequence[str] | None]:
    """Flux's ``(command[, outputFields])`` and ShellBolt's ``(*command)`` forms."""
    if args and isinstance(args[0], list | tuple):
        if len(args) > 2:
            raise TypeError(f"expected (command[, outputFields]), got {args!r}")
        return tuple(args[0]), (args[1] if len(args) == 2 else None)
    return tuple(args), None


class FluxShellBolt(_FluxShell, ShellBolt):
    """A multilang bolt configured entirely from Flux YAML (Storm's ``FluxShellBolt``; also
    stands for ``org.apache.storm.task.ShellBolt``).

    Args:
        *args: ``(command_list[, output_fields])``, or the command as separate strings;
            more streams with ``setNamedStream`` / ``setDefaultStream``.

    >>> bolt = FluxShellBolt(["python3", "splitsentence.py"], ["word"])
    >>> bolt.setNamedStream("lengths", ["word", "length"])
    >>> bolt.command, bolt.outputFields
    (('python3', 'splitsentence.py'), {'default': ['word'], 'lengths': ['word', 'length']})
    """

    def __init__(self, *args: Any) -> None:
        command, outputs = _command(args)
        ShellBolt.__init__(self, *command)
        self._setup(outputs)


class FluxShellSpout(_FluxShell, ShellSpout):
    """A multilang spout configured entirely from Flux YAML (Storm's ``FluxShellSpout``; also
    stands for ``org.apache.storm.spout.ShellSpout``); arguments as :class:`FluxShellBolt`."""

    def __init__(self, *args: Any) -> None:
        command, outputs = _command(args)
        ShellSpout.__init__(self, *command)
        self._setup(outputs)


class LogInfoBolt(BaseBasicBolt):
    """Logs every tuple it receives at INFO; emits nothing (Storm's ``LogInfoBolt``)."""

    def execute(self, input: Tuple, collector: BasicOutputCollector) -> None:
        """Log ``input``."""
        log.info("%r", input)

    def declareOutputFields(self, declarer: OutputFieldsDeclarer) -> None:
        """No outputs."""
