"""heronpy's ``global_metrics``: one process-wide counter, published as ``__auto__/<key>``.

``incr``/``safe_incr`` count into a `MultiCountMetric` that every heronpy spout and bolt
registers with its context (under ``__auto__``, every ``heron.metrics.export.interval.sec``)
just before its ``initialize`` runs, as Heron's instance does at start; ``init`` is that
registration, idempotent per process.

>>> from heron_core.api.metrics import MultiCountMetric
>>> safe_incr("count"); incr("count", 2)
>>> metricsContainer.get_value_and_reset()
{'count': 3}
"""

from __future__ import annotations

import threading
from typing import Any

from heron_core.api.metrics import MultiCountMetric

__all__ = ["incr", "init", "metricsContainer", "safe_incr"]

metricsContainer = MultiCountMetric()
registered = False
root_name = "__auto__"
lock = threading.Lock()


def incr(key: str, to_add: int = 1) -> None:
    """Add ``to_add`` to counter ``key``."""
    metricsContainer.incr(key, to_add)


def safe_incr(key: str, to_add: int = 1) -> None:
    """Add ``to_add`` to counter ``key`` under the module's lock."""
    with lock:
        metricsContainer.incr(key, to_add)


def init(metrics_collector: Any, metrics_bucket: float) -> None:
    """Register the counters with ``metrics_collector`` (anything with
    ``register_metric(name, metric, bucket)``, e.g. a `TopologyContext`), once per process."""
    global registered
    with lock:
        if not registered:
            metrics_collector.register_metric(root_name, metricsContainer, metrics_bucket)
            registered = True
