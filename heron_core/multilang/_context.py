"""What the handshake tells a multilang subprocess: Storm's ``conf`` and ``context`` maps."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from heron_core.api import Grouping, TopologyContext
from heron_core.plan import GroupingKind

__all__ = ["ShellMetric", "handshake_conf", "handshake_context"]

log = logging.getLogger(__name__)

_STORM_GROUPING_NAMES = {
    GroupingKind.SHUFFLE: "SHUFFLE",
    GroupingKind.FIELDS: "FIELDS",
    GroupingKind.ALL: "ALL",
    GroupingKind.NONE: "NONE",
    GroupingKind.DIRECT: "DIRECT",
    GroupingKind.LOCAL_OR_SHUFFLE: "LOCAL_OR_SHUFFLE",
    GroupingKind.CUSTOM: "CUSTOM_SERIALIZED",
    GroupingKind.PARTIAL_KEY: "CUSTOM_SERIALIZED",  # Storm's partial key is a custom grouping
}


def _grouping_json(grouping: Grouping) -> dict[str, Any]:
    """Storm's JSON form: global grouping is FIELDS with no fields."""
    if grouping.kind is GroupingKind.LOWEST:
        return {"type": "FIELDS", "fields": []}
    shown: dict[str, Any] = {"type": _STORM_GROUPING_NAMES[grouping.kind]}
    if grouping.kind is GroupingKind.FIELDS:
        shown["fields"] = list(grouping.grouping_fields)
    return shown


def handshake_context(context: TopologyContext) -> dict[str, Any]:
    """Storm's ``TopologyContext.toJSONString()`` for the task of ``context``.

    ``task->component`` lists the tasks of this component and of every component it exchanges
    streams with (the native context does not enumerate the others).
    """
    me = context.get_component_id()
    targets = context.get_this_targets()
    sources = context.get_this_sources() or {}
    source_grouping: dict[str, dict[str, Any]] = {}
    source_fields: dict[str, dict[str, list[str]]] = {}
    for stream_id, grouping in sources.items():
        source = str(stream_id.component_id)
        source_grouping.setdefault(source, {})[stream_id.stream_id] = _grouping_json(grouping)
        fields = list(context.get_output_fields(source, stream_id.stream_id))
        source_fields.setdefault(source, {})[stream_id.stream_id] = fields
    peers = {me, *source_grouping, *(name for per in targets.values() for name in per)}
    return {
        "task->component": {
            str(task): name for name in sorted(peers) for task in context.get_component_tasks(name)
        },
        "taskid": context.get_task_id(),
        "componentid": me,
        "streams": list(targets),
        "stream->outputfields": {s: list(context.get_output_fields(me, s)) for s in targets},
        "stream->target->grouping": {
            s: {name: _grouping_json(g) for name, g in per.items()} for s, per in targets.items()
        },
        "source->stream->grouping": source_grouping,
        "source->stream->fields": source_fields,
    }


def handshake_conf(config: Mapping[str, Any], context: TopologyContext) -> dict[str, Any]:
    """The config a subprocess gets: every JSON-representable entry of ``config`` (others are
    left out, with a debug log), and ``topology.name`` filled in."""
    conf: dict[str, Any] = {}
    for key, value in config.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            log.debug("config key %r is not JSON-representable; not sent to the subprocess", key)
            continue
        conf[key] = value
    if not conf.get("topology.name"):
        conf["topology.name"] = context.get_topology_name()
    return conf


class ShellMetric:
    """A metric a multilang component updates with the ``metrics`` command (registered with
    the task's context on first use): numeric params add up, like Storm's
    ``CountShellMetric``, and are published as counts (``metric_type`` SUM); any other value
    replaces the previous one and is published as a gauge (LAST).

    >>> metric = ShellMetric()
    >>> metric.update(2); metric.update(3)
    >>> metric.metric_type, metric.get_value_and_reset(), metric.get_value_and_reset()
    ('SUM', 5, None)
    >>> metric.update({"a": 1}); metric.metric_type
    'LAST'
    """

    def __init__(self) -> None:
        self._value: Any = None

    @property
    def metric_type(self) -> str:
        """SUM while the value is a number, else LAST."""
        value = self._value
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        return "SUM" if numeric or value is None else "LAST"

    def update(self, params: Any) -> None:
        """Apply one ``metrics`` command's params."""
        numeric = isinstance(params, int | float) and not isinstance(params, bool)
        if numeric and isinstance(self._value, int | float):
            self._value += params
        else:
            self._value = params

    def get_value_and_reset(self) -> Any:
        """The value since the last call (None if none)."""
        value, self._value = self._value, None
        return value
