"""The instance's connection to its stream manager: metrics never wait behind data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from heron_core.instance.stmgr_client import StMgrClient
from heron_core.network import decode, metrics_endpoint, task_endpoint
from heron_core.proto import metrics_pb2

WAIT_MS = 30_000


@pytest.fixture
def context() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def test_metrics_reach_the_stmgr_while_the_data_socket_is_not_read(
    context: zmq.Context[zmq.Socket[bytes]], tmp_path: Path
) -> None:
    """Under back pressure a stream manager stops reading a spout's task socket; the spout's
    counters still arrive (before, they queued behind its data and its rate read 0)."""
    prefix = f"ipc://{tmp_path}/"
    task = context.socket(zmq.DEALER)  # the stmgr's side of task 7, never read here
    task.setsockopt(zmq.RCVHWM, 1)
    task.bind(task_endpoint(prefix, 7))
    metrics = context.socket(zmq.PULL)
    metrics.bind(metrics_endpoint(prefix))
    client = StMgrClient(context, task_endpoint(prefix, 7))
    try:
        while not client.pending:  # fill the data path until sends wait
            client.send_data(8, b"x" * 1000)
        publisher = metrics_pb2.MetricPublisher(
            component_name="word", instance_id="container_1_word_7"
        )
        client.send_message(metrics_pb2.MetricPublisherPublishMessage(publisher=publisher))
        assert metrics.poll(WAIT_MS), "no metrics arrived"
        received = decode(metrics.recv_multipart())
        assert isinstance(received, metrics_pb2.MetricPublisherPublishMessage)
        assert received.publisher.instance_id == "container_1_word_7"
        assert client.pending  # the data still waits
    finally:
        for socket in (client.socket, client.metrics_socket, task, metrics):
            socket.close(linger=0)
