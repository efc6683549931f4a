"""``StreamletSpoutBase``: what every Streamlet source declares (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Sequence

from heron_core.api import Stream
from heronpy.streamlet.impl.streamletboltbase import OUTPUT_FIELD, OUTPUT_STREAM

__all__ = ["StreamletSpoutBase"]


class StreamletSpoutBase:
    """Declares the source's output: stream ``output`` with one field ``_output_``."""

    outputs: Sequence[str | Stream] = [Stream(fields=[OUTPUT_FIELD], name=OUTPUT_STREAM)]
