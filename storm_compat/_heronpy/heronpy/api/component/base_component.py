"""heronpy's ``component.base_component``: ``BaseComponent``, what heronpy spouts and bolts
share.

In heronpy the runtime builds a component as ``Cls(delegate=instance)``; here the runtime
builds it with no arguments (``delegate`` defaults to None) and attaches its collector, so a
heronpy class runs unchanged. Users do not override ``__init__`` (as in heronpy; use
``initialize``).

Before a component's ``initialize`` runs, the process-wide ``global_metrics`` counters are
registered with its context (as Heron's instance does at start), so ``safe_incr`` counts
are published as ``__auto__/<key>``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from heron_core.config import setting
from heronpy.api import global_metrics

__all__ = ["BaseComponent"]

_HOOK = "initialize"
_WRAPPED = "_heronpy_prepares_first"


class BaseComponent:
    """The heronpy base of spouts and bolts (mixed into the native classes).

    Args:
        delegate: heronpy's runtime object; kept as ``self.delegate``, unused here.
    """

    def __init__(self, delegate: Any = None) -> None:
        self.delegate = delegate

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        initialize = cls.__dict__.get(_HOOK)
        if callable(initialize) and not getattr(initialize, _WRAPPED, False):
            setattr(cls, _HOOK, _preparing(initialize))


def _preparing(initialize: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(initialize)
    def prepared(self: Any, config: dict[str, Any], context: Any) -> Any:
        _prepare(config, context)
        return initialize(self, config, context)

    setattr(prepared, _WRAPPED, True)
    return prepared


def _prepare(config: dict[str, Any], context: Any) -> None:
    """Register ``global_metrics`` with the context, once per process."""
    if global_metrics.registered or not hasattr(context, "register_metric"):
        return
    interval = float(setting(config, "heron.metrics.export.interval.sec"))
    global_metrics.init(context, interval)
