"""The arguments of Storm's overloaded emit methods: positional parameters defaulting to
`UNSET` rather than ``*args`` (a call without packing is cheaper, and emits are per tuple)."""

from __future__ import annotations

from typing import Any

__all__ = ["UNSET", "given"]

UNSET: Any = object()
"""An argument the caller did not give."""


def given(*args: Any) -> tuple[Any, ...]:
    """``args`` without the `UNSET` ones: the arguments of the call, as ``*args`` had them.

    >>> given("s", ["x"], UNSET)
    ('s', ['x'])
    """
    return tuple(arg for arg in args if arg is not UNSET)
