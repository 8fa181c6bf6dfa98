"""Serving the gRPC API: limits, subscription time, clean shutdown, health and reflection on an in-process
server; and ``ledgermirror serve --grpc-port`` as a process (both APIs, the gRPC metrics in ``/metrics``, a
stream ended with a status at Ctrl+C, a taken gRPC port refused)."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.mirror import consensus_service_pb2_grpc as consensus_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2, timestamp_pb2
from tests.grpc_api.conftest import TEST_SETTINGS, TOPIC, ServerThread, Topics, subscribe
from tests.support import Ledger

from ledgermirror.grpc_api.consensus import IDLE, SHUTTING_DOWN, TOO_LONG
from ledgermirror.grpc_api.limits import TOO_MANY, TOO_MANY_FROM_CLIENT
from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings

FROM_EPOCH = consensus.ConsensusTopicQuery(
    topicID=basic_types_pb2.TopicID(topicNum=TOPIC), consensusStartTime=timestamp_pb2.Timestamp(seconds=0)
)


@pytest.fixture
def limited(database: Prepared) -> Iterator[ServerThread]:
    settings = dataclasses.replace(
        TEST_SETTINGS,
        grpc_max_subscriptions=3,
        grpc_max_subscriptions_per_client=2,
        grpc_max_subscription_seconds=2,
    )
    server = ServerThread(settings, database)
    yield server
    server.stop()


class OpenStream:
    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.call = consensus_grpc.ConsensusServiceStub(self.channel).subscribeTopic(FROM_EPOCH, timeout=30)
        self.received: list[int] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for response in self.call:
                self.received.append(response.sequenceNumber)
        except grpc.RpcError:
            pass

    def ended(self, seconds: float = 15) -> tuple[grpc.StatusCode, str]:
        self.thread.join(seconds)
        assert not self.thread.is_alive(), "the stream is still open"
        return self.call.code(), self.call.details()

    def close(self) -> None:
        self.call.cancel()
        self.thread.join(5)
        self.channel.close()


def wait_until(condition: object, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def test_subscriptions_per_client_and_in_total(limited: ServerThread, topics: Topics) -> None:
    topics.messages(1)
    streams = [OpenStream(limited.address) for _ in range(2)]
    try:
        wait_until(lambda: all(stream.received for stream in streams))
        with grpc.insecure_channel(limited.address) as channel:
            refused = subscribe(consensus_grpc.ConsensusServiceStub(channel), FROM_EPOCH, seconds=5)
        assert (refused.code, refused.details) == (grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY_FROM_CLIENT)
    finally:
        for stream in streams:
            stream.close()


def test_total_subscriptions(database: Prepared, topics: Topics) -> None:
    settings = dataclasses.replace(TEST_SETTINGS, grpc_max_subscriptions=1)
    server = ServerThread(settings, database)
    topics.messages(1)
    stream = OpenStream(server.address)
    try:
        wait_until(lambda: stream.received)
        with grpc.insecure_channel(server.address) as channel:
            refused = subscribe(consensus_grpc.ConsensusServiceStub(channel), FROM_EPOCH, seconds=5)
        assert (refused.code, refused.details) == (grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY)
    finally:
        stream.close()
        server.stop()


def test_subscription_time_limit(limited: ServerThread, topics: Topics) -> None:
    topics.messages(1)
    stream = OpenStream(limited.address)
    try:
        assert stream.ended() == (grpc.StatusCode.UNAVAILABLE, TOO_LONG)
        assert stream.received == [1]
    finally:
        stream.close()


def test_shutdown_ends_every_stream_with_a_status(database: Prepared, topics: Topics) -> None:
    server = ServerThread(TEST_SETTINGS, database)
    topics.messages(2)
    streams = [OpenStream(server.address) for _ in range(3)]
    wait_until(lambda: all(len(stream.received) == 2 for stream in streams))
    server.stop()
    for stream in streams:
        assert stream.ended() == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
        stream.close()


def test_health_and_reflection(grpc_server: ServerThread) -> None:
    with grpc.insecure_channel(grpc_server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in (
            "",
            "com.hedera.mirror.api.proto.ConsensusService",
            "com.hedera.mirror.api.proto.NetworkService",
        ):
            answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        services = set(ProtoReflectionDescriptorDatabase(channel).get_services())
        assert {
            "com.hedera.mirror.api.proto.ConsensusService",
            "com.hedera.mirror.api.proto.NetworkService",
            "grpc.health.v1.Health",
        } <= services
        described = ProtoReflectionDescriptorDatabase(channel).FindFileContainingSymbol(
            "com.hedera.mirror.api.proto.ConsensusService"
        )
        assert "subscribeTopic" in [method.name for method in described.service[0].method]


def test_oversized_request_refused(grpc_server: ServerThread) -> None:
    # the reference accepts requests of at most 1 KiB
    with grpc.insecure_channel(grpc_server.address) as channel:
        request = consensus.ConsensusTopicQuery(topicID=basic_types_pb2.TopicID(topicNum=TOPIC))
        padded = request.SerializeToString() + bytes([0x2A, 0xFF, 0x0F]) + b"x" * 2047  # field 5, 2047 bytes
        call = channel.unary_stream(
            "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic",
            request_serializer=lambda raw: raw,
            response_deserializer=lambda raw: raw,
        )
        with pytest.raises(grpc.RpcError) as raised:
            list(call(padded, timeout=5))
        assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


# ledgermirror serve -----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    prepared = prepare(Settings(data_dir=tmp_path))
    try:
        Ledger(prepared.owner_url).load(
            {
                "entities": [{"num": TOPIC, "type": "TOPIC"}],
                "topicmessages": [
                    {"topic_id": TOPIC, "sequence_number": seq, "consensus_timestamp": 1_000 + seq}
                    for seq in (1, 2)
                ],
            }
        )
    finally:
        prepared.stop()
    port, grpc_port = free_port(), free_port()
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("LEDGERMIRROR_")},
        "LEDGERMIRROR_DATA_DIR": str(tmp_path),
        "LEDGERMIRROR_GRPC_PORT": str(grpc_port),
        "NO_PROXY": "127.0.0.1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "ledgermirror", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[1]
            try:
                with urllib.request.urlopen(base + "/health/readiness", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        yield process, base, f"127.0.0.1:{grpc_port}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)


def test_serve_runs_both_apis(served: tuple[subprocess.Popen[str], str, str]) -> None:
    process, base, address = served
    stream = OpenStream(address)
    wait_until(lambda: len(stream.received) == 2, 20)
    assert stream.received == [1, 2]
    with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
        metrics = response.read().decode()
    assert "ledgermirror_grpc_subscriptions 1.0" in metrics
    assert 'ledgermirror_grpc_messages_sent_total{phase="history"} 2.0' in metrics
    assert "ledgermirror_http_requests_total{" in metrics  # the REST API's own metrics are still there
    process.send_signal(signal.SIGINT)  # Ctrl+C: the open stream ends with a status, the process exits
    assert stream.ended(30) == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
    stream.close()
    process.communicate(timeout=60)
    assert process.returncode == 0


def test_serve_refuses_a_taken_grpc_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **{key: value for key, value in os.environ.items() if not key.startswith("LEDGERMIRROR_")},
            "LEDGERMIRROR_DATA_DIR": str(tmp_path),
        }
        result = subprocess.run(
            [sys.executable, "-m", "ledgermirror", "serve", "--port", str(free_port()), "--grpc-port", str(port)],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 5
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert "--grpc-port" in result.stderr


def test_idle_subscription_time(database: Prepared, topics: Topics) -> None:
    settings = dataclasses.replace(TEST_SETTINGS, grpc_idle_subscription_seconds=1)
    server = ServerThread(settings, database)
    topics.messages(1)
    stream = OpenStream(server.address)
    try:
        assert stream.ended() == (grpc.StatusCode.UNAVAILABLE, IDLE)
        assert stream.received == [1]
    finally:
        stream.close()
        server.stop()
