"""heronpy's ``state.state``: ``State`` and its dict-backed ``HashMapState``, the kernel's own
(`heron_core.api.State`, `heron_core.api.HashMapState`).

A `StatefulComponent` gets a ``HashMapState`` in ``init_state`` when the topology runs
``EFFECTIVELY_ONCE`` (``topology.reliability.mode``); the runtime pickles it at every
checkpoint and gives back the newest consistent checkpoint's copy after a failure, so keys
and values must pickle. The classes are usable on their own.

>>> state = HashMapState()
>>> state.put("heron", 3)
>>> state.get("heron"), state.get("storm")
(3, None)
>>> list(state.enumerate())
[(0, 'heron')]
>>> state["heron"] = 4; "heron" in state, state["heron"]
(True, 4)
"""

from heron_core.api import HashMapState, State

__all__ = ["HashMapState", "State"]
