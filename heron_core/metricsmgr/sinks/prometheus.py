"""The ``prometheus`` sink: an HTTP endpoint for Prometheus to scrape (via ``prometheus-client``).

Each metric becomes ``heron_<name>`` with every character Prometheus does not allow turned into
``_`` (``__emit-count/default`` -> ``heron_emit_count_default``), labelled with the component
and instance (and the topology, with ``include-topology-name``). A metric that aggregates by SUM
is a counter of its all-time total; any other is a gauge of its newest value. The endpoint is
plain HTTP, read-only, bound to the container's address; its address is written to
``W/metrics/prometheus-<container>.json`` in Prometheus' ``file_sd_configs`` format so that a
Prometheus server finds every container.
"""

from __future__ import annotations

import json
import logging
import re
import socketserver
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from heron_core.errors import ConfigurationError
from heron_core.metricsmgr._types import SUM
from heron_core.metricsmgr.sinks.base import MetricsSink, SinkContext
from heron_core.proto import metrics_pb2

__all__ = ["PrometheusSink", "prometheus_name"]

log = logging.getLogger(__name__)

_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9]+")


def prometheus_name(name: str) -> str:
    """The Prometheus name of metric ``name``.

    >>> prometheus_name("__emit-count/default"), prometheus_name("__process/__mem_used_bytes")
    ('heron_emit_count_default', 'heron_process_mem_used_bytes')
    >>> prometheus_name("my.metric/key 1")
    'heron_my_metric_key_1'
    """
    return "heron_" + _NOT_ALLOWED.sub("_", name.replace("_", " ")).strip("_")


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Values(Collector):
    """The newest state of every series, read by the HTTP thread under a lock."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.lock = threading.Lock()
        self.labels = labels
        # prometheus name -> (is a counter, help, {label values: value})
        self.series: dict[str, tuple[bool, str, dict[tuple[str, ...], float]]] = {}

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            snapshot = [(n, c, h, dict(v)) for n, (c, h, v) in self.series.items()]
        for name, counter, text, values in snapshot:
            family: CounterMetricFamily | GaugeMetricFamily
            if counter:
                family = CounterMetricFamily(name, text, labels=self.labels)
            else:
                family = GaugeMetricFamily(name, text, labels=self.labels)
            for label_values, value in values.items():
                family.add_metric(list(label_values), value)
            yield family


class PrometheusSink(MetricsSink):
    """Serves ``path`` on ``port`` (0: a free port; N > 0: N + the container id)."""

    OPTIONS = frozenset({"port", "path", "include-topology-name"})

    @classmethod
    def check(cls, kind: str, options: Mapping[str, Any]) -> None:
        port = options.get("port", 0)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65000:
            raise ConfigurationError(f"{kind}: port must be 0 or a port number, got {port!r}")
        path = options.get("path", "/metrics")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ConfigurationError(f"{kind}: path must start with '/', got {path!r}")
        if not isinstance(options.get("include-topology-name", True), bool):
            raise ConfigurationError(f"{kind}: include-topology-name must be true or false")

    def __init__(self, name: str, options: Mapping[str, Any], context: SinkContext) -> None:
        super().__init__(name, options, context)
        self._topology = bool(options.get("include-topology-name", True))
        labels = (
            ("topology", "component", "instance") if self._topology else ("component", "instance")
        )
        self._values = _Values(labels)
        self._pending: list[metrics_pb2.MetricPublisherPublishMessage] = []
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self._values)
        path = str(options.get("path", "/metrics"))
        base = int(options.get("port", 0))
        port = base + context.container if base else 0
        self._server = make_server(
            context.host, port, _only(path, make_wsgi_app(registry)), _Server, _QuietHandler
        )
        self.port = self._server.server_port
        self.url = f"http://{context.host}:{self.port}{path}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="prometheus-sink", daemon=True
        )
        self._thread.start()
        self._write_target(context)
        log.info("%s: Prometheus endpoint at %s", name, self.url)

    def _write_target(self, context: SinkContext) -> None:
        target = context.working_dir / "metrics" / f"prometheus-{context.container}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        labels = {
            "topology": context.topology_name,
            "container": str(context.container),
            "__metrics_path__": str(self.options.get("path", "/metrics")),
        }
        partial = target.with_suffix(".json.tmp")
        partial.write_text(
            json.dumps([{"targets": [f"{context.host}:{self.port}"], "labels": labels}])
        )
        partial.replace(target)

    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        self._pending.append(message)

    def flush(self) -> None:
        if not self._pending:
            return
        types = self.context.types
        publisher_labels: Callable[[metrics_pb2.MetricPublisher], tuple[str, ...]]
        if self._topology:
            topology = self.context.topology_name

            def publisher_labels(p: metrics_pb2.MetricPublisher) -> tuple[str, ...]:
                return (topology, p.component_name, p.instance_id)
        else:

            def publisher_labels(p: metrics_pb2.MetricPublisher) -> tuple[str, ...]:
                return (p.component_name, p.instance_id)

        with self._values.lock:
            series = self._values.series
            for message in self._pending:
                labels = publisher_labels(message.publisher)
                for datum in message.metrics:
                    try:
                        value = float(datum.value)
                    except ValueError:
                        continue
                    name = prometheus_name(datum.name)
                    counter = types.type_of(datum.name, datum.type) == SUM
                    held = series.get(name)
                    if held is None or held[0] != counter:
                        held = series[name] = (counter, f"Heron metric {datum.name}", {})
                    values = held[2]
                    values[labels] = values.get(labels, 0.0) + value if counter else value
        self._pending.clear()

    def close(self) -> None:
        self.flush()
        self._server.shutdown()
        self._server.server_close()


def _only(path: str, app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != path:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [f"not found; the metrics are at {path}\n".encode()]
        return app(environ, start_response)

    return serve
