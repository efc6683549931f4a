"""heronpy's ``PulsarStreamlet``: not available in this runtime (see `pulsarspout`).

>>> PulsarStreamlet.pulsarStreamlet("pulsar://localhost:6650", "words")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
heronpy.connectors.pulsar.pulsarspout.PulsarNotAvailableError: heronpy's Pulsar connector \
(PulsarStreamlet) is not available in this runtime: ...
"""

from __future__ import annotations

from typing import Any

from heronpy.connectors.pulsar.pulsarspout import not_available

__all__ = ["PulsarStreamlet"]


class PulsarStreamlet:
    """heronpy's Pulsar source Streamlet: constructing it raises ``PulsarNotAvailableError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        not_available("PulsarStreamlet")

    @staticmethod
    def pulsarStreamlet(*args: Any, **kwargs: Any) -> PulsarStreamlet:
        """heronpy's factory: raises ``PulsarNotAvailableError``."""
        return PulsarStreamlet(*args, **kwargs)
