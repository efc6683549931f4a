"""The instance's connection to its stream manager: metrics never wait behind data."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from heron_core.instance import stmgr_client
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


def publish(client: StMgrClient, number: int, padding: int = 0) -> None:
    publisher = metrics_pb2.MetricPublisher(instance_id=f"message-{number}")
    message = metrics_pb2.MetricPublisherPublishMessage(publisher=publisher)
    message.metrics.add(name="padding", value="x" * padding)
    client.send_message(message)


def receive(socket: zmq.Socket[bytes]) -> str:
    assert socket.poll(WAIT_MS), "no metrics arrived"
    message = decode(socket.recv_multipart())
    assert isinstance(message, metrics_pb2.MetricPublisherPublishMessage)
    return message.publisher.instance_id


def test_metrics_wait_in_a_backlog_and_only_its_overflow_is_dropped_and_counted(
    context: zmq.Context[zmq.Socket[bytes]], tmp_path: Path
) -> None:
    """A message covers one interval: one the metrics manager cannot take yet waits; only when
    the backlog overflows is the oldest dropped (and counted for the next message)."""
    prefix = f"ipc://{tmp_path}/"
    metrics = context.socket(zmq.PULL)
    metrics.setsockopt(zmq.RCVHWM, 1)
    metrics.bind(metrics_endpoint(prefix))
    client = StMgrClient(context, task_endpoint(prefix, 7))
    try:
        sent = 0
        while client.metrics_dropped < 5:  # until the socket, the manager and the backlog fill
            publish(client, sent, padding=10_000)
            sent += 1
            assert sent < 100_000, "the metrics socket never filled"
        assert len(client.metrics_backlog) == stmgr_client.METRICS_BACKLOG
        received: list[str] = []
        deadline = time.monotonic() + WAIT_MS / 1000
        while len(received) < sent - 5 and time.monotonic() < deadline:
            client.drain_metrics()
            if metrics.poll(50):
                received.append(receive(metrics))
        assert client.drain_metrics() and not client.metrics_backlog
        numbers = [int(name.partition("-")[2]) for name in received]
        assert numbers == sorted(numbers)  # in order; the five oldest of the backlog are gone
        assert len(set(numbers)) == sent - 5
    finally:
        for socket in (client.socket, client.metrics_socket, metrics):
            socket.close(linger=0)


def test_the_final_message_is_delivered_after_close(
    context: zmq.Context[zmq.Socket[bytes]], tmp_path: Path
) -> None:
    """At exit the instance sends its last message and closes: the socket lingers, so a
    metrics manager that binds a moment later still gets it."""
    prefix = f"ipc://{tmp_path}/"
    client = StMgrClient(context, task_endpoint(prefix, 7))
    publish(client, 1)
    assert client.flush_metrics(5.0)  # queued on the connecting socket
    client.close()
    metrics = context.socket(zmq.PULL)
    try:
        metrics.bind(metrics_endpoint(prefix))
        assert receive(metrics) == "message-1"
    finally:
        metrics.close(linger=0)
