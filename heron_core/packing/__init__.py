"""Packing: placing a topology's instances into containers, behind the :class:`Packing` ABC.

Built-ins are registered under short names in :data:`BUILTINS`; :func:`create_packing` also
accepts a ``package.module:Class`` path or a :class:`Packing` instance.
"""

from __future__ import annotations

from heron_core.packing._first_fit_decreasing import FirstFitDecreasingPacking
from heron_core.packing._round_robin import RoundRobinPacking
from heron_core.packing.base import Packing
from heron_core.plugins import load_plugin

__all__ = [
    "BUILTINS",
    "FirstFitDecreasingPacking",
    "Packing",
    "RoundRobinPacking",
    "create_packing",
]

BUILTINS: dict[str, str] = {
    "round_robin": "heron_core.packing:RoundRobinPacking",
    "first_fit_decreasing": "heron_core.packing:FirstFitDecreasingPacking",
}
"""Short name -> ``package.module:Class`` of each built-in packing algorithm."""


def create_packing(spec: str | Packing) -> Packing:
    """The packing algorithm named by ``spec`` (``heron.class.packing.algorithm``).

    Args:
        spec: a short name from :data:`BUILTINS`, a ``package.module:Class`` path to a
            :class:`Packing` subclass (built with no arguments), or a :class:`Packing`
            instance, returned unchanged.

    Raises:
        ConfigurationError: an unknown short name (the message lists the known ones), a path
            that does not import, or a class that is not a :class:`Packing`.

    >>> type(create_packing("first_fit_decreasing")).__name__
    'FirstFitDecreasingPacking'
    >>> create_packing("best_fit")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: unknown packing algorithm 'best_fit'; known: \
first_fit_decreasing, round_robin, or a 'package.module:Class' path
    """
    packing: Packing = load_plugin("packing algorithm", spec, BUILTINS, Packing)
    return packing
