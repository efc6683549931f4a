"""heronpy's ``topology_context``: ``TopologyContext``, the native interface.

The runtime passes an implementation to ``initialize``; it has heronpy's methods
(``get_task_id``, ``get_component_id``, ``get_cluster_config``, ``get_topology_name``,
``register_metric``, ``get_sources``, ``get_this_sources``, ``get_component_tasks``,
``add_task_hook``, which takes a ``heronpy.api.task_hook.ITaskHook``).
"""

from heron_core.api import TopologyContext

__all__ = ["TopologyContext"]
