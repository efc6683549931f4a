"""``StreamletBoltBase``: what every Streamlet bolt declares (heronpy's module path)."""

from __future__ import annotations

from collections.abc import Sequence

from heron_core.api import Stream

__all__ = ["OUTPUT_FIELD", "OUTPUT_STREAM", "StreamletBoltBase"]

OUTPUT_STREAM = "output"
"""The stream every stage emits its elements on."""
OUTPUT_FIELD = "_output_"
"""Its one field: the element."""


class StreamletBoltBase:
    """Declares the stage's output: stream ``output`` with one field ``_output_``.

    >>> StreamletBoltBase.outputs
    [Stream(fields=('_output_',), name='output', direct=False)]
    """

    outputs: Sequence[str | Stream] = [Stream(fields=[OUTPUT_FIELD], name=OUTPUT_STREAM)]
