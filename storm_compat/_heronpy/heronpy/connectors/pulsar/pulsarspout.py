"""heronpy's ``PulsarSpout``: not available in this runtime.

heronpy's Pulsar connector needs the Pulsar client library and its own Java-side spout; this
runtime provides neither. The module imports, so a program that only mentions the connector
loads; using it raises `PulsarNotAvailableError`.

>>> PulsarSpout()
Traceback (most recent call last):
...
heronpy.connectors.pulsar.pulsarspout.PulsarNotAvailableError: heronpy's Pulsar connector \
(PulsarSpout) is not available in this runtime: read Pulsar with your own Generator (the \
pulsar-client package's Consumer.receive in get()) passed to Builder.new_source
"""

from __future__ import annotations

from typing import Any, NoReturn

from heron_core.errors import ConfigurationError

__all__ = ["PulsarNotAvailableError", "PulsarSpout", "not_available"]


class PulsarNotAvailableError(ConfigurationError):
    """A program used heronpy's Pulsar connector, which this runtime does not provide."""


def not_available(what: str) -> NoReturn:
    """Raise `PulsarNotAvailableError` for ``what``."""
    raise PulsarNotAvailableError(
        f"heronpy's Pulsar connector ({what}) is not available in this runtime: read Pulsar "
        "with your own Generator (the pulsar-client package's Consumer.receive in get()) "
        "passed to Builder.new_source"
    )


class PulsarSpout:
    """heronpy's Pulsar spout: constructing it raises `PulsarNotAvailableError`."""

    serviceUrl = "PULSAR_SERVICE_URL"
    topicName = "PULSAR_TOPIC"
    receiveTimeoutMs = "PULSAR_RECEIVE_TIMEOUT_MS"
    deserializer = "PULSAR_DESERIALIZER"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        not_available("PulsarSpout")
