"""Config dicts <-> the ``Config`` protobuf message of the logical plan.

Values that JSON represents exactly (None, bool, int, float, str, and lists/dicts of those
with string keys) travel as JSON text; anything else is pickled. Decoding gives back an
equal dict. `config_from_proto` unpickles: call it only on a message whose origin was
authenticated (read through a state manager holding the topology's key, see
``heron_core.statemgr.StateKey``); `json_config_from_proto` never unpickles, for a message
that may come from anyone (``heron kill``, the tracker's clients).

>>> cfg = {"topology.workers": 2, "my.key": ("a", 1)}
>>> config_from_proto(config_to_proto(cfg)) == cfg
True
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from typing import Any

from heron_core.proto import topology_pb2

__all__ = ["config_from_proto", "config_to_proto", "json_config_from_proto"]


def _json_exact(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if type(value) is list:
        return all(_json_exact(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _json_exact(v) for k, v in value.items())
    return False


def _canonical(value: Any) -> Any:
    """``value`` with every (sortable) set rebuilt from its sorted items, so that equal values
    pickle to equal bytes: a set's iteration order depends on the order it was built in."""
    kind = type(value)
    if kind in (set, frozenset):
        items = [_canonical(v) for v in value]
        try:
            items.sort()
        except TypeError:
            return value
        return kind(items)
    if kind is list:
        return [_canonical(v) for v in value]
    if kind is tuple:
        return tuple(_canonical(v) for v in value)
    if kind is dict:
        return {k: _canonical(v) for k, v in value.items()}
    return value


def _pickle(value: Any) -> bytes:
    return pickle.dumps(_canonical(value), protocol=pickle.HIGHEST_PROTOCOL)


def config_to_proto(config: Mapping[str, Any]) -> topology_pb2.Config:
    """Encode ``config`` (keys sorted, so equal dicts give equal bytes)."""
    message = topology_pb2.Config()
    for key in sorted(config):
        value = config[key]
        kv = message.kvs.add(key=key)
        if _json_exact(value):
            kv.json_value = json.dumps(value, sort_keys=True)
        else:
            kv.pickled_value = _pickle(value)
    return message


def config_from_proto(message: topology_pb2.Config) -> dict[str, Any]:
    """Decode a ``Config`` message into a dict, unpickling its pickled values: only for a
    message whose origin was authenticated (see the module's docstring)."""
    out: dict[str, Any] = {}
    for kv in message.kvs:
        if kv.WhichOneof("value") == "pickled_value":
            out[kv.key] = pickle.loads(kv.pickled_value)
        else:
            out[kv.key] = json.loads(kv.json_value) if kv.json_value else None
    return out


def json_config_from_proto(message: topology_pb2.Config) -> dict[str, Any]:
    """The JSON values of a ``Config`` message as a dict, never unpickling: a pickled value is
    left out (a reader gets the key's registered default through ``setting``).

    >>> message = config_to_proto({"topology.workers": 2, "my.key": ("a", 1)})
    >>> json_config_from_proto(message)
    {'topology.workers': 2}
    """
    out: dict[str, Any] = {}
    for kv in message.kvs:
        if kv.WhichOneof("value") != "pickled_value":
            out[kv.key] = json.loads(kv.json_value) if kv.json_value else None
    return out
