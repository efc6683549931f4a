"""The ``TopologyContext`` user code receives in ``initialize``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from heron_core.api import GlobalStreamId, Grouping, TopologyContext
from heron_core.api._context import log_reported_error
from heron_core.api.hooks import TaskHook
from heron_core.instance._plan import PlanView
from heron_core.plan import GroupingKind
from heron_core.proto import topology_pb2

if TYPE_CHECKING:
    from heron_core.instance._runtime import InstanceRuntime

log = logging.getLogger(__name__)


class InstanceContext(TopologyContext):
    """This task's view of the running topology."""

    def __init__(self, runtime: InstanceRuntime, plan: PlanView, config: dict[str, Any]) -> None:
        self._runtime = runtime
        self._plan = plan
        self._config = config

    def get_task_id(self) -> int:
        return self._runtime.args.task_id

    def get_component_id(self) -> str:
        return self._runtime.args.component

    def get_component_index(self) -> int:
        return self._runtime.args.component_index

    def get_cluster_config(self) -> dict[str, Any]:
        return self._config

    def get_topology_name(self) -> str:
        return self._plan.topology_name

    def get_topology_id(self) -> str:
        return self._plan.topology_id

    def get_sources(self, component_id: str) -> dict[GlobalStreamId, Grouping] | None:
        """``{GlobalStreamId(source, stream): grouping}`` of ``component_id``'s inputs."""
        inputs = self._plan.inputs.get(component_id)
        if inputs is None:
            return None
        return {GlobalStreamId(i.stream.component_name, i.stream.id): _grouping(i) for i in inputs}

    def get_component_tasks(self, component_id: str) -> list[int]:
        return list(self._plan.component_tasks.get(component_id, []))

    def get_output_fields(self, component_id: str, stream: str) -> tuple[str, ...]:
        return self._plan.stream_fields(component_id, stream)

    def get_this_targets(self) -> dict[str, dict[str, Grouping]]:
        """``{stream: {consuming component: grouping}}`` of this component's outputs."""
        me = self.get_component_id()
        return {
            stream: {
                name: _grouping(inp) for name, inp in self._plan.consumers.get((me, stream), [])
            }
            for stream in self._plan.outputs.get(me, {})
        }

    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: int) -> None:
        """Publish ``metric`` under ``name`` every ``time_bucket_in_sec`` seconds (see
        `heron_core.api.TopologyContext.register_metric`).

        Raises:
            ValueError: ``name`` is taken, ``metric`` has no ``get_value_and_reset`` or the
                bucket is not a positive number.
        """
        self._runtime.metrics.register(name, metric, time_bucket_in_sec)

    def get_task_to_component(self) -> dict[int, str]:
        return dict(self._plan.task_component)

    def get_component_streams(self, component_id: str) -> list[str]:
        return sorted(self._plan.outputs.get(component_id, {}))

    def get_container_tasks(self) -> list[int]:
        return sorted(self._plan.tasks_in_container(self._runtime.args.container))

    def add_task_hook(self, task_hook: TaskHook) -> None:
        """Register ``task_hook`` for this task (see
        `heron_core.api.TopologyContext.add_task_hook`).

        Raises:
            TypeError: ``task_hook`` is not a ``TaskHook``.
            HeronError: ``initialize`` has returned already.
        """
        self._runtime.add_hook(task_hook)

    def get_task_hooks(self) -> list[TaskHook]:
        hooks = self._runtime.hooks
        return [] if hooks is None else list(hooks.hooks)

    def report_error(self, error: BaseException | str) -> None:
        """Log ``error`` and publish it to the topology's exception log."""
        log_reported_error(log, self._runtime.where, error)
        self._runtime.metrics.exceptions.add(error)

    def prepare_custom_grouping(self, grouping: Any, stream: str, target_tasks: list[int]) -> None:
        grouping.prepare(self, self.get_component_id(), stream, target_tasks)


def _grouping(inp: topology_pb2.InputStream) -> Grouping:
    return Grouping(
        GroupingKind(inp.gtype), tuple(inp.grouping_fields), bytes(inp.custom_grouping_object)
    )
