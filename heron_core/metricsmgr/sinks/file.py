"""The ``file`` sink: every published message as one JSON line, in rotated files under the
container's working directory (Heron's FileSink)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heron_core.errors import ConfigurationError
from heron_core.metricsmgr.sinks.base import MetricsSink, SinkContext
from heron_core.proto import metrics_pb2

__all__ = ["FileSink", "message_record"]

log = logging.getLogger(__name__)


def message_record(
    message: metrics_pb2.MetricPublisherPublishMessage, topology: str
) -> dict[str, Any]:
    """The JSON object of one message.

    >>> m = metrics_pb2.MetricPublisherPublishMessage(timestamp=5, publisher=
    ...     metrics_pb2.MetricPublisher(component_name="word", instance_id="container_1_word_2"),
    ...     metrics=[metrics_pb2.MetricDatum(name="__emit-count/default", value="3")])
    >>> message_record(m, "wc")["metrics"]
    {'__emit-count/default': '3'}
    """
    publisher = message.publisher
    return {
        "timestamp": message.timestamp,
        "topology": topology,
        "component": publisher.component_name,
        "instance": publisher.instance_id,
        "hostname": publisher.hostname,
        "metrics": {datum.name: datum.value for datum in message.metrics},
        "exceptions": [
            {
                "stacktrace": e.stacktrace,
                "firsttime": e.firsttime,
                "lasttime": e.lasttime,
                "count": e.count,
                "logging": e.logging,
            }
            for e in message.exceptions
        ],
    }


class FileSink(MetricsSink):
    """Writes JSON lines to ``filename-output`` (relative to the working directory;
    ``{container}`` is replaced by the container id). When the file passes ``file-size-mb``
    it becomes ``<name>.1`` (the older ones shift up) and at most ``file-maximum`` files are
    kept, the current one included."""

    OPTIONS = frozenset({"filename-output", "file-size-mb", "file-maximum"})

    @classmethod
    def check(cls, kind: str, options: Mapping[str, Any]) -> None:
        name = options.get("filename-output", "metrics/metrics-{container}.json")
        if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in name:
            raise ConfigurationError(
                f"{kind}: filename-output must be a relative path inside the working "
                f"directory, got {name!r}"
            )
        for option, default in (("file-size-mb", 10), ("file-maximum", 5)):
            value = options.get(option, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigurationError(f"{kind}: {option} must be > 0, got {value!r}")

    def __init__(self, name: str, options: Mapping[str, Any], context: SinkContext) -> None:
        super().__init__(name, options, context)
        pattern = str(options.get("filename-output", "metrics/metrics-{container}.json"))
        self.path = context.working_dir / pattern.replace("{container}", str(context.container))
        self._max_bytes = int(float(options.get("file-size-mb", 10)) * (1 << 20))
        self._keep = int(options.get("file-maximum", 5))
        self._lines: list[str] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def process(self, message: metrics_pb2.MetricPublisherPublishMessage) -> None:
        record = message_record(message, self.context.topology_name)
        self._lines.append(json.dumps(record, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        if not self._lines:
            return
        text = "".join(self._lines)
        self._lines.clear()
        try:
            with self.path.open("a", encoding="utf-8") as out:
                out.write(text)
                size = out.tell()
            if size >= self._max_bytes:
                self._rotate()
        except OSError as exc:
            log.warning("%s: cannot write %s: %s", self.name, self.path, exc)

    def _rotate(self) -> None:
        oldest = self.path.with_name(f"{self.path.name}.{self._keep - 1}")
        oldest.unlink(missing_ok=True)
        for index in range(self._keep - 2, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                older.rename(self.path.with_name(f"{self.path.name}.{index + 1}"))
        if self._keep > 1:
            self.path.rename(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink(missing_ok=True)
