"""The state of stateful bolts (Storm's ``org.apache.storm.state``).

A bolt that implements ``IStatefulBolt`` (subclass ``BaseStatefulBolt``) gets an
`InMemoryKeyValueState` in ``initState``; the topology then runs ``EFFECTIVELY_ONCE``: the
runtime checkpoints the committed key/values of every task with Heron's aligned checkpoints
and, after a failure anywhere in the topology, rolls every task back to the newest consistent
checkpoint.

>>> from storm_compat.state import InMemoryKeyValueState, KeyValueState
>>> counts: KeyValueState[str, int] = InMemoryKeyValueState()
>>> counts.put("storm", counts.get("storm", 0) + 1)
>>> [(word, n) for word, n in counts]
[('storm', 1)]
"""

from storm_compat.state._state import InMemoryKeyValueState, KeyValueState, State

__all__ = ["InMemoryKeyValueState", "KeyValueState", "State"]
