"""heronpy's ``state.stateful_component``: the ``StatefulComponent`` mixin, the kernel's own
(`heron_core.api.StatefulComponent`), so the instance recognises heronpy's stateful spouts and
bolts.

When ``topology.reliability.mode`` is ``EFFECTIVELY_ONCE`` the instance calls, on a spout or
bolt that mixes it in:

* ``init_state(state)`` before ``initialize``, with the state of the newest consistent
  checkpoint (an empty ``HashMapState`` at first);
* ``pre_save(checkpoint_id)`` before each checkpoint, which then saves (pickles) the state
  given to ``init_state``;
* after a failure anywhere in the topology, ``restart_from_state(state, config, context)``
  with the state of the checkpoint rolled back to; by default it calls ``close``, then
  ``init_state(state)`` and ``initialize(config, context)`` again.

In the other modes none of these is called, as in Heron.
"""

from heron_core.api import StatefulComponent

__all__ = ["StatefulComponent"]
