"""A real gRPC server (grpcio's asyncio server on its own event loop thread) on the session's embedded
PostgreSQL, and helpers that write the reference tests' fixtures (``ReactiveDomainBuilder``: topic 0.0.100,
messages with sequence 1, 2, 3 ... one nanosecond apart)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import Any

import asyncpg
import grpc
import pytest
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.mirror import consensus_service_pb2_grpc as consensus_grpc
from hiero_sdk_python.hapi.mirror import mirror_network_service_pb2_grpc as network_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2, timestamp_pb2
from tests.support import Ledger

from ledgermirror.db.write import copy_rows
from ledgermirror.grpc_api.metrics import GrpcMetrics
from ledgermirror.grpc_api.server import GrpcServer
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

TOPIC = 100
TEST_SETTINGS = Settings(
    grpc_poll_interval_ms=100,
    grpc_end_time_interval_ms=100,  # the reference's test configuration (endTimeInterval: 100ms)
)


class ServerThread:
    """A :class:`GrpcServer` on 127.0.0.1 (a free port) in an event loop of its own thread."""

    def __init__(self, settings: Settings, database: Prepared, *, listen: bool = True) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.metrics = GrpcMetrics()
        self.server = GrpcServer(
            settings,
            database.api_url,
            listen_dsn=database.api_url if listen else None,
            metrics=self.metrics,
        )
        if not listen:
            self.server.listen_dsn = None
        self.port = self.call(self.server.start(host="127.0.0.1", port=0))
        self.address = f"127.0.0.1:{self.port}"

    def call(self, work: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def stop(self) -> None:
        self.call(self.server.stop(1.0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="session")
def grpc_server(database: Prepared) -> Iterator[ServerThread]:
    server = ServerThread(TEST_SETTINGS, database)
    yield server
    server.stop()


@pytest.fixture
def channel(grpc_server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(grpc_server.address) as opened:
        yield opened


@pytest.fixture
def consensus_stub(channel: grpc.Channel) -> consensus_grpc.ConsensusServiceStub:
    return consensus_grpc.ConsensusServiceStub(channel)


@pytest.fixture
def network_stub(channel: grpc.Channel) -> network_grpc.NetworkServiceStub:
    return network_grpc.NetworkServiceStub(channel)


@dataclasses.dataclass
class Topics:
    """The reference's ``msg()`` fixtures: messages of topic 0.0.100 numbered from 1, at ``T0 + seq - 1``."""

    ledger: Ledger
    url: str
    t0: int = dataclasses.field(default_factory=time.time_ns)
    sequence: int = 0

    def topic(self, num: int = TOPIC, kind: str = "TOPIC") -> None:
        self.ledger.load({"entities": [{"num": num, "type": kind}]})

    def message_rows(
        self, count: int, at: int | None = None, topic: int = TOPIC, **extra: Any
    ) -> list[dict[str, Any]]:
        rows = []
        for index in range(count):
            self.sequence += 1
            timestamp = (self.t0 + self.sequence - 1) if at is None else at + index
            rows.append(
                {
                    "topic_id": topic,
                    "sequence_number": self.sequence,
                    "consensus_timestamp": timestamp,
                    "message": f"message {self.sequence}".encode(),
                    "running_hash": f"running hash {self.sequence}".encode(),
                    "running_hash_version": 2,
                    "chunk_num": 1,
                    "chunk_total": 1,
                    "initial_transaction_id": transaction_id(2000 + self.sequence, timestamp - 1),
                    **extra,
                }
            )
        return rows

    def messages(
        self, count: int, at: int | None = None, topic: int = TOPIC, **extra: Any
    ) -> list[dict[str, Any]]:
        rows = self.message_rows(count, at, topic, **extra)
        write_messages(self.url, rows)
        return rows

    def insert_later(self, rows: list[dict[str, Any]], delay: float) -> threading.Thread:
        """Write ``rows`` after ``delay`` seconds, from another thread (its own connection)."""

        def write() -> None:
            time.sleep(delay)
            write_messages(self.url, rows)

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        return thread


def write_messages(url: str, rows: list[dict[str, Any]]) -> None:
    """``topic_message`` rows as the importer writes them (binary COPY through ``db/write.py``)."""

    async def write() -> None:
        conn = await asyncpg.connect(url)
        try:
            await copy_rows(conn, "topic_message", [{**MESSAGE_DEFAULTS, **row} for row in rows])
        finally:
            await conn.close()

    asyncio.run(write())


MESSAGE_DEFAULTS: dict[str, Any] = {
    "message": b"message",
    "running_hash": b"running hash",
    "running_hash_version": 2,
    "chunk_num": None,
    "chunk_total": None,
    "payer_account_id": None,
    "valid_start_timestamp": None,
    "initial_transaction_id": None,
}


@pytest.fixture
def topics(ledger: Ledger, database: Prepared) -> Topics:
    made = Topics(ledger, database.owner_url)
    made.topic()
    return made


def transaction_id(payer: int, valid_start: int) -> bytes:
    seconds, nanos = divmod(valid_start, 1_000_000_000)
    return basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(accountNum=payer),
        transactionValidStart=timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos),
    ).SerializeToString()


def expected_response(row: dict[str, Any]) -> consensus.ConsensusTopicResponse:
    """The response the reference builds from a row (its test's ``ConsensusTopicResponse`` equality)."""
    response = consensus.ConsensusTopicResponse(
        message=row["message"],
        runningHash=row["running_hash"],
        sequenceNumber=row["sequence_number"],
        runningHashVersion=row["running_hash_version"] if row["running_hash_version"] is not None else 3,
    )
    response.consensusTimestamp.seconds, response.consensusTimestamp.nanos = divmod(
        row["consensus_timestamp"], 1_000_000_000
    )
    if row.get("chunk_num") is not None:
        response.chunkInfo.number = row["chunk_num"]
        response.chunkInfo.total = row["chunk_total"]
        response.chunkInfo.initialTransactionID.ParseFromString(row["initial_transaction_id"])
    return response


@dataclasses.dataclass
class Outcome:
    responses: list[consensus.ConsensusTopicResponse]
    code: grpc.StatusCode
    details: str

    @property
    def sequences(self) -> list[int]:
        return [response.sequenceNumber for response in self.responses]


def subscribe(
    stub: consensus_grpc.ConsensusServiceStub, query: consensus.ConsensusTopicQuery, seconds: float = 10
) -> Outcome:
    """Read the stream until it ends, or until ``seconds`` pass (then the code is ``DEADLINE_EXCEEDED``: the
    stream was still open)."""
    responses: list[consensus.ConsensusTopicResponse] = []
    try:
        for response in stub.subscribeTopic(query, timeout=seconds):
            responses.append(response)
    except grpc.RpcError as error:
        return Outcome(responses, error.code(), error.details() or "")
    return Outcome(responses, grpc.StatusCode.OK, "")
