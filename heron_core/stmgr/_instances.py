"""The stream manager's side of its local instances: one DEALER socket per local task
(``<prefix>task-<T>``, ipc) carrying data, acks and control both ways, their registration, and
the throttling of local spouts under back pressure."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import zmq

from heron_core.network import Dispatcher, encode, task_endpoint
from heron_core.proto import common_pb2, physical_plan_pb2, stmgr_pb2
from heron_core.stmgr._outbox import Outbox, Outboxes

__all__ = ["INSTANCE_HWM", "Instances"]

log = logging.getLogger(__name__)

INSTANCE_HWM = 16


class Instances:
    """The local tasks of one stream manager.

    Args:
        stmgr_id: the stream manager's id ("stmgr-K").
        topology_id: the topology's id; a registration naming another one is refused.
        local_instances: the container's instances (from its packing plan).
        spout_tasks: the local tasks that run spouts (throttled under back pressure).
        outboxes: where the task sockets' outboxes live.
        on_registered: called after each registration request (the tmanager link
            registers this stream manager once every local instance has).
    """

    def __init__(
        self,
        stmgr_id: str,
        topology_id: str,
        local_instances: list[physical_plan_pb2.Instance],
        spout_tasks: set[int],
        outboxes: Outboxes,
        on_registered: Callable[[], None],
    ) -> None:
        self.stmgr_id = stmgr_id
        self.topology_id = topology_id
        self.local_instances = local_instances
        self.spout_tasks = spout_tasks
        self._outboxes = outboxes
        self._on_registered = on_registered
        self.task_box: dict[int, Outbox] = {}
        self.socket_task: dict[zmq.Socket[bytes], int] = {}
        self.registered: dict[int, int] = {}  # task -> pid
        self.pplan: physical_plan_pb2.PhysicalPlan | None = None
        self.on_restarted: Callable[[int], None] | None = None
        """Called with the task of each instance that registers again (EFFECTIVELY_ONCE: the
        topology rolls back)."""
        self.dispatcher = Dispatcher(f"{stmgr_id} (instances)")
        self.dispatcher.register(stmgr_pb2.RegisterInstanceRequest, self.on_register)

    @property
    def all_registered(self) -> bool:
        return len(self.registered) >= len(self.local_instances)

    def bind(self, context: zmq.Context[zmq.Socket[bytes]], local_endpoint: str) -> None:
        """Bind one socket per local task under ``local_endpoint``."""
        for instance in self.local_instances:
            task = instance.info.task_id
            sock = context.socket(zmq.DEALER)
            sock.setsockopt(zmq.SNDHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.RCVHWM, INSTANCE_HWM)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind(task_endpoint(local_endpoint, task))
            box = Outbox(sock, instance.instance_id, readable=True)
            self.task_box[task] = box
            self.socket_task[sock] = task
            self._outboxes.add(box)

    def send(self, task: int, message: Any) -> None:
        """Send a control message to local task ``task`` (after its queued frames)."""
        self._outboxes.send(self.task_box[task], encode(message))

    def throttle(self, throttled: bool) -> None:
        """Stop (True) or resume (False) reading the local spouts' sockets."""
        for task in self.spout_tasks:
            box = self.task_box[task]
            box.readable = not throttled
            self._outboxes.update_poll(box)

    def on_register(self, request: stmgr_pb2.RegisterInstanceRequest, task: int) -> None:
        """The one handler of RegisterInstanceRequest, from the socket of task ``task``."""
        claimed = request.instance.info.task_id
        status = common_pb2.Status(status=common_pb2.OK)
        if claimed != task or request.topology_id != self.topology_id:
            status = common_pb2.Status(
                status=common_pb2.NOTOK,
                message=f"task {claimed} of {request.topology_id} on the socket of task {task}",
            )
            log.error("%s: %s", self.stmgr_id, status.message)
        restarted = task in self.registered
        if status.status == common_pb2.OK:
            self.registered[task] = request.pid
            log.info(
                "%s: instance task %d registered (pid %d%s)",
                self.stmgr_id,
                task,
                request.pid,
                ", a restart" if restarted else "",
            )
        response = stmgr_pb2.RegisterInstanceResponse(status=status)
        if self.pplan is not None:
            response.pplan.CopyFrom(self.pplan)
        self.send(task, response)
        self._on_registered()
        if restarted and self.on_restarted is not None and status.status == common_pb2.OK:
            self.on_restarted(task)

    def assign(self, pplan: physical_plan_pb2.PhysicalPlan) -> None:
        """Hand a new physical plan to every registered instance (and to later ones)."""
        self.pplan = pplan
        assignment = stmgr_pb2.NewInstanceAssignmentMessage(pplan=pplan)
        for task in self.registered:
            self.send(task, assignment)
