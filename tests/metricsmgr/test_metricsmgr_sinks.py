"""The metrics sinks on their own: the config check, the file sink's lines and rotation, the
Prometheus endpoint scraped over HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import zmq

from heron_core.config import build_config
from heron_core.config._keys import METRICS_SINKS
from heron_core.errors import ConfigurationError
from heron_core.metricsmgr import SUM, MetricTypes
from heron_core.metricsmgr.sinks import MetricsSink, SinkContext, check_sinks
from heron_core.metricsmgr.sinks.file import FileSink
from heron_core.metricsmgr.sinks.prometheus import PrometheusSink
from heron_core.network import Transport
from heron_core.proto import metrics_pb2


def _context(tmp_path: Path, container: int = 1) -> SinkContext:
    config = build_config()
    return SinkContext(
        topology_name="wc",
        topology_id="wc-1",
        cluster="local",
        container=container,
        working_dir=tmp_path,
        host="127.0.0.1",
        config=config,
        types=MetricTypes.from_config(config),
        zmq_context=zmq.Context.instance(),
        transport=Transport(zmq.Context.instance(), None, "test"),
        tmanager_location=lambda: None,
    )


def _message(instance: str, at_ms: int, **values: str) -> metrics_pb2.MetricPublisherPublishMessage:
    component = instance.split("_")[2]
    return metrics_pb2.MetricPublisherPublishMessage(
        publisher=metrics_pb2.MetricPublisher(component_name=component, instance_id=instance),
        timestamp=at_ms,
        metrics=[metrics_pb2.MetricDatum(name=k, value=v) for k, v in values.items()],
    )


def _sinks(**blocks: Any) -> dict[str, Any]:
    return {"heron.metrics.sinks": {"sinks": list(blocks), **blocks}}


@pytest.mark.parametrize(
    ("blocks", "error"),
    [
        ({"a": {"class": "nope"}}, r"sink 'a': unknown class 'nope'; known: file, prometheus"),
        ({"a": {"class": "file", "colour": 1}}, r"sink 'a': unknown option\(s\) colour"),
        (
            {"a": {"class": "file", "flush-frequency-ms": 0}},
            r"sink 'a': flush-frequency-ms must be a positive integer",
        ),
        (
            {"a": {"class": "file", "filename-output": "../x.json"}},
            r"sink 'a': filename-output must be a relative path",
        ),
        ({"a": {"class": "prometheus", "port": "x"}}, r"sink 'a': port must be 0 or a port"),
        (
            {"a": {"class": "prometheus", "max-connections": 0}},
            r"sink 'a': max-connections must be an integer from 1 to 10000, got 0",
        ),
        (
            {"a": {"class": "prometheus", "request-timeout-ms": True}},
            r"sink 'a': request-timeout-ms must be an integer from 100 to 600000, got True",
        ),
        (
            {"a": {"class": "prometheus", "request-timeout-ms": 5.5}},
            r"sink 'a': request-timeout-ms must be an integer from 100 to 600000, got 5.5",
        ),
        ({"a": {"class": "collections:OrderedDict"}}, r"is not a subclass of MetricsSink"),
        ({"a": {"class": "no.such.module:Sink"}}, r"sink 'a': cannot import module"),
    ],
)
def test_a_bad_sink_block_is_refused_with_its_name(blocks: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigurationError, match=error):
        check_sinks(_sinks(**blocks))


def test_the_prometheus_sink_defaults_are_the_ones_metrics_sinks_yaml_writes_out() -> None:
    block = dict(METRICS_SINKS["prometheus-sink"])
    assert block.pop("class") == "prometheus"
    block.pop("flush-frequency-ms")
    assert block == PrometheusSink.DEFAULTS


def test_a_listed_sink_needs_a_block() -> None:
    with pytest.raises(ConfigurationError, match="sink 'b' is listed in 'sinks' but has no"):
        check_sinks({"heron.metrics.sinks": {"sinks": ["b"]}})


def test_a_bad_sinks_config_fails_the_client_config() -> None:
    from heron_core.client._config import client_config

    with pytest.raises(ConfigurationError, match=r"heron\.metrics\.sinks"):
        client_config(
            "local", overrides=['heron.metrics.sinks={"sinks": ["x"], "x": {"class": "y"}}']
        )


class _Recording(MetricsSink):
    """A user's sink: a class path in the config."""

    OPTIONS = frozenset({"label"})
    seen: list[str] = []

    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        self.seen.append(message.publisher.instance_id)

    def flush(self) -> None:
        self.seen.append("flush")


def test_a_sink_class_of_the_user_is_built_with_its_options(tmp_path: Path) -> None:
    from heron_core.metricsmgr.sinks import build_sinks

    config = _sinks(mine={"class": f"{__name__}:_Recording", "label": "x"})
    [sink] = build_sinks(config, _context(tmp_path))
    assert isinstance(sink, _Recording) and sink.options["label"] == "x"
    sink.process(_message("container_1_word_1", 1))
    sink.close()
    assert _Recording.seen == ["container_1_word_1", "flush"]


def test_the_file_sink_writes_json_lines_and_rotates(tmp_path: Path) -> None:
    options = {"class": "file", "file-size-mb": 0.0005, "file-maximum": 3}  # ~500 bytes a file
    sink = FileSink("file-sink", options, _context(tmp_path, container=2))
    assert sink.path == tmp_path / "metrics" / "metrics-2.json"
    sink.process(_message("container_2_word_1", 1000, **{"__emit-count/default": "7"}))
    sink.flush()
    [line] = sink.path.read_text().splitlines()
    record = json.loads(line)
    assert record["instance"] == "container_2_word_1" and record["topology"] == "wc"
    assert record["metrics"] == {"__emit-count/default": "7"}
    for at in range(40):
        sink.process(_message("container_2_word_1", at, **{"__emit-count/default": "1"}))
        sink.flush()
    sink.close()
    files = sorted(p.name for p in sink.path.parent.iterdir())
    assert files == ["metrics-2.json", "metrics-2.json.1", "metrics-2.json.2"]  # 3 kept
    for path in sink.path.parent.iterdir():
        assert all(
            json.loads(line)["component"] == "word" for line in path.read_text().split("\n") if line
        )


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_the_prometheus_sink_serves_counters_and_gauges(tmp_path: Path) -> None:
    context = _context(tmp_path, container=3)
    sink = PrometheusSink("prometheus-sink", {"class": "prometheus", "port": 0}, context)
    try:
        assert context.types.type_of("__emit-count/default") == SUM
        for at, count in ((1000, "5"), (2000, "7")):  # two intervals: the counter adds up
            sink.process(
                _message(
                    "container_3_word_1",
                    at,
                    **{"__emit-count/default": count, "__py-physical-memory-byte": "4096"},
                )
            )
        sink.flush()
        text = _scrape(sink.url)
        labels = 'component="word",instance="container_3_word_1",topology="wc"'
        assert f"heron_emit_count_default_total{{{labels}}} 12.0" in text
        assert f"heron_py_physical_memory_byte{{{labels}}} 4096.0" in text
        target = json.loads((tmp_path / "metrics" / "prometheus-3.json").read_text())
        assert target == [
            {
                "targets": [f"127.0.0.1:{sink.port}"],
                "labels": {"topology": "wc", "container": "3", "__metrics_path__": "/metrics"},
            }
        ]
        with pytest.raises(urllib.error.HTTPError) as missing:
            _scrape(f"http://127.0.0.1:{sink.port}/other")
        assert missing.value.code == 404
        missing.value.close()
    finally:
        sink.close()
