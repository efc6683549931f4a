"""The built-in metrics sinks and the reading of ``heron.metrics.sinks``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.errors import ConfigurationError
from heron_core.metricsmgr.sinks.base import MetricsSink, SinkContext, check_options
from heron_core.plugins import resolve_class

__all__ = ["BUILTIN_SINKS", "MetricsSink", "SinkContext", "build_sinks", "check_sinks"]

BUILTIN_SINKS = {
    "tmanager": "heron_core.metricsmgr.sinks.tmanager:TManagerSink",
    "file": "heron_core.metricsmgr.sinks.file:FileSink",
    "prometheus": "heron_core.metricsmgr.sinks.prometheus:PrometheusSink",
}
"""Short name -> class path of the sinks that come with the engine."""

_KEY = "config key 'heron.metrics.sinks'"


def check_sinks(config: Mapping[str, Any]) -> list[tuple[str, type[MetricsSink], dict[str, Any]]]:
    """The sinks ``config`` names, in order: (name, class, options), every option checked.

    Raises:
        ConfigurationError: ``sinks`` missing or not a list, a sink without its block or its
            ``class``, a class that does not import or is not a `MetricsSink`, an unknown
            option or a bad value; the message names the sink and the option.

    >>> from heron_core.config import build_config
    >>> [name for name, _, _ in check_sinks(build_config())]
    ['tmanager-sink', 'file-sink', 'prometheus-sink']
    >>> check_sinks({"heron.metrics.sinks": {"sinks": ["x"]}})
    Traceback (most recent call last):
    heron_core.errors.ConfigurationError: config key 'heron.metrics.sinks': sink 'x' is listed \
in 'sinks' but has no block of its own
    """
    sinks = config.get("heron.metrics.sinks") or {}
    names = sinks.get("sinks", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f"{_KEY}: 'sinks' must be a list of sink names, got {names!r}")
    if len(set(names)) != len(names):
        raise ConfigurationError(f"{_KEY}: 'sinks' names a sink twice: {names!r}")
    found = []
    for name in names:
        block = sinks.get(name)
        if not isinstance(block, Mapping):
            raise ConfigurationError(
                f"{_KEY}: sink {name!r} is listed in 'sinks' but has no block of its own"
            )
        kind = f"{_KEY}, sink {name!r}"
        spec = block.get("class")
        if not isinstance(spec, str) or not spec:
            known = ", ".join(sorted(BUILTIN_SINKS))
            raise ConfigurationError(
                f"{kind}: 'class' must name a sink ({known}, or 'package.module:Class')"
            )
        if spec in BUILTIN_SINKS:
            cls = resolve_class(BUILTIN_SINKS[spec])
        elif ":" in spec:
            try:
                cls = resolve_class(spec)
            except ConfigurationError as exc:
                raise ConfigurationError(f"{kind}: {exc}") from None
        else:
            known = ", ".join(sorted(BUILTIN_SINKS))
            raise ConfigurationError(
                f"{kind}: unknown class {spec!r}; known: {known}, or a 'package.module:Class' path"
            )
        if not (isinstance(cls, type) and issubclass(cls, MetricsSink)):
            raise ConfigurationError(f"{kind}: {spec!r} is not a subclass of MetricsSink")
        check_options(kind, cls, block)
        found.append((name, cls, dict(block)))
    return found


def build_sinks(config: Mapping[str, Any], context: SinkContext) -> list[MetricsSink]:
    """Build the sinks of ``config`` (see `check_sinks`) for a metrics manager."""
    return [cls(name, options, context) for name, cls, options in check_sinks(config)]
