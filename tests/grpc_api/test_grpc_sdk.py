"""hiero-sdk-python against our server: its ``TopicMessageQuery`` (history, limit, end time, chunked messages
grouped, a topic that does not exist) and its reading of our address book (``NodeAddress._from_proto`` on the
``getNodes`` answer: the SDK has no mirror address book query of its own, so the stream is read with the
service's generated stub on the SDK's mirror channel). Live messages arriving while an import runs are in
``test_grpc_live_import.py``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hiero_sdk_python import Client, Network, TopicId, TopicMessageQuery
from hiero_sdk_python.address_book.node_address import NodeAddress
from hiero_sdk_python.hapi.mirror import mirror_network_service_pb2 as network
from hiero_sdk_python.hapi.mirror import mirror_network_service_pb2_grpc as network_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2
from tests.grpc_api.conftest import TOPIC, ServerThread, Topics, transaction_id
from tests.grpc_api.test_grpc_network import add_book, add_entry, add_stake
from tests.support import Ledger

NANOS = 1_000_000_000


@pytest.fixture
def client(grpc_server: ServerThread) -> Iterator[Client]:
    made = Client(Network(network="solo", mirror_address=grpc_server.address))
    yield made
    made.close()


class Collected:
    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.errors: list[Exception] = []
        self.completed = threading.Event()

    def run(self, query: TopicMessageQuery, client: Client, seconds: float = 10) -> Collected:
        query.set_completion_handler(self.completed.set)
        handle = query.subscribe(client, on_message=self.messages.append, on_error=self._failed)
        self.completed.wait(seconds)
        handle.cancel()
        return self

    def _failed(self, error: Exception) -> None:
        self.errors.append(error)
        self.completed.set()

    @property
    def sequences(self) -> list[int]:
        return [int(message.sequence_number) for message in self.messages]


def since_epoch() -> datetime:
    return datetime.fromtimestamp(0, UTC)


def test_history_with_limit(client: Client, topics: Topics) -> None:
    rows = topics.messages(5)
    query = TopicMessageQuery(topic_id=TopicId(0, 0, TOPIC), start_time=since_epoch(), limit=3)
    collected = Collected().run(query, client)
    assert collected.completed.is_set() and not collected.errors
    assert collected.sequences == [1, 2, 3]
    assert [message.contents for message in collected.messages] == [row["message"] for row in rows[:3]]
    assert [message.running_hash for message in collected.messages] == [row["running_hash"] for row in rows[:3]]


def test_history_until_end_time(client: Client, topics: Topics) -> None:
    start = topics.t0 - 10 * NANOS
    rows = [topics.messages(1, at=start + index * 1_000_000)[0] for index in range(4)]  # 1 ms apart
    end = datetime.fromtimestamp((start + 2_500_000) / NANOS, UTC)  # (the SDK's times are in microseconds)
    query = TopicMessageQuery(topic_id=TopicId(0, 0, TOPIC), start_time=since_epoch(), end_time=end)
    collected = Collected().run(query, client)
    assert collected.completed.is_set() and not collected.errors
    assert collected.sequences == [1, 2, 3]
    assert len(rows) == 4


def test_chunked_message_grouped_by_the_sdk(client: Client, topics: Topics) -> None:
    initial = transaction_id(1001, topics.t0 - NANOS)
    topics.messages(1, at=topics.t0, chunk_num=1, chunk_total=2, initial_transaction_id=initial, message=b"hello ")
    topics.messages(
        1, at=topics.t0 + 1, chunk_num=2, chunk_total=2, initial_transaction_id=initial, message=b"world"
    )
    query = TopicMessageQuery(
        topic_id=TopicId(0, 0, TOPIC), start_time=since_epoch(), limit=2, chunking_enabled=True
    )
    collected = Collected().run(query, client)
    assert not collected.errors
    assert [message.contents for message in collected.messages] == [b"hello world"]
    assert str(collected.messages[0].transaction_id).startswith("0.0.1001@")


def test_unknown_topic_reaches_the_error_handler(client: Client, topics: Topics) -> None:
    # NOT_FOUND is retried by the SDK; after its attempts the error handler gets it
    query = TopicMessageQuery(topic_id=TopicId(0, 0, 999), start_time=since_epoch()).set_max_attempts(1)
    collected = Collected().run(query, client)
    assert len(collected.errors) == 1
    assert "0.0.999 does not exist" in str(collected.errors[0])


def test_sdk_reads_our_address_book(client: Client, ledger: Ledger) -> None:
    add_book(ledger)
    for node in (0, 1):
        add_entry(
            ledger,
            node,
            public_key=f"30820{node}",
            cert_hash=f"cert {node}".encode(),
            description=f"node {node}",
            endpoints=((f"127.0.0.{node + 1}", 50211, ""), ("", 50212, f"node{node}.example.com")),
        )
        add_stake(ledger, node, 1000 + node)
    stub = network_grpc.NetworkServiceStub(client.mirror_channel)
    request = network.AddressBookQuery(file_id=basic_types_pb2.FileID(fileNum=102))
    book = [NodeAddress._from_proto(node) for node in stub.getNodes(request, timeout=10)]
    assert [(str(node._account_id), node._node_id, node._description) for node in book] == [
        ("0.0.3", 0, "node 0"),
        ("0.0.4", 1, "node 1"),
    ]
    endpoints = [sorted((e._address, e._port, e._domain_name) for e in node._addresses) for node in book]
    assert endpoints == [
        [(b"", 50212, "node0.example.com"), (bytes([127, 0, 0, 1]), 50211, "")],
        [(b"", 50212, "node1.example.com"), (bytes([127, 0, 0, 2]), 50211, "")],
    ]
    assert [node._cert_hash for node in book] == [b"cert 0", b"cert 1"]
