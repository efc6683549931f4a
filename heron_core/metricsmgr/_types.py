"""How metric values of successive intervals combine: Heron's ``tmanager-metrics-type``.

Every value a publisher sends covers one export interval. Whoever aggregates intervals (the
tmanager's metrics cache, the Prometheus sink) asks `MetricTypes.type_of` how.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heron_core.errors import ConfigurationError
from heron_core.proto import metrics_pb2

__all__ = ["AVG", "LAST", "STMGR_COMPONENT", "SUM", "MetricTypes"]

STMGR_COMPONENT = "__stmgr__"
"""The component name stream managers publish their own metrics under (as in Heron)."""

SUM = metrics_pb2.SUM
AVG = metrics_pb2.AVG
LAST = metrics_pb2.LAST
_NAMES = {"SUM": SUM, "AVG": AVG, "LAST": LAST}


class MetricTypes:
    """The type table of the ``tmanager-sink`` block of ``heron.metrics.sinks``.

    An entry names a metric, or every metric below it: ``__emit-count`` matches
    ``__emit-count/default`` and ``__emit-count/split/default``. The longest entry that
    matches wins; a name no entry matches takes the publisher's hint, else LAST.

    Args:
        table: metric name -> "SUM", "AVG" or "LAST".
        where: named in errors (the config key and sink).

    Raises:
        ConfigurationError: a type that is not SUM, AVG or LAST.

    >>> types = MetricTypes({"__emit-count": "SUM", "__server": "SUM"})
    >>> [metrics_pb2.MetricType.Name(types.type_of(n)) for n in
    ...  ("__emit-count/default", "__emit-countx", "__server/__bytes_to_workers")]
    ['SUM', 'LAST', 'SUM']
    >>> metrics_pb2.MetricType.Name(types.type_of("my-latency", hint=AVG))
    'AVG'
    """

    def __init__(self, table: Mapping[str, Any], where: str = "tmanager-metrics-type") -> None:
        self._table: dict[str, metrics_pb2.MetricType.ValueType] = {}
        for name, kind in table.items():
            if not isinstance(kind, str) or kind.upper() not in _NAMES:
                raise ConfigurationError(
                    f"{where}: metric {name!r} has type {kind!r}; expected SUM, AVG or LAST"
                )
            self._table[str(name)] = _NAMES[kind.upper()]
        self._cache: dict[tuple[str, int], metrics_pb2.MetricType.ValueType] = {}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> MetricTypes:
        """The table of a topology config's ``heron.metrics.sinks`` (empty without one)."""
        sinks = config.get("heron.metrics.sinks") or {}
        block = sinks.get("tmanager-sink") or {}
        return cls(
            block.get("tmanager-metrics-type") or {},
            "config key 'heron.metrics.sinks', tmanager-sink, tmanager-metrics-type",
        )

    def type_of(
        self, name: str, hint: metrics_pb2.MetricType.ValueType = metrics_pb2.METRIC_TYPE_UNSET
    ) -> metrics_pb2.MetricType.ValueType:
        """SUM, AVG or LAST for metric ``name`` published with type ``hint``."""
        key = (name, hint)
        found = self._cache.get(key)
        if found is None:
            found = self._lookup(name) or hint or LAST
            if len(self._cache) < 100_000:
                self._cache[key] = found
        return found

    def _lookup(self, name: str) -> metrics_pb2.MetricType.ValueType | None:
        probe = name
        while True:
            kind = self._table.get(probe)
            if kind is not None:
                return kind
            cut = probe.rfind("/")
            if cut <= 0:
                return None
            probe = probe[:cut]
