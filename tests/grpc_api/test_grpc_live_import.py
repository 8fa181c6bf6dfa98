"""History, then live messages, while the real importer commits a simulated stream beside the server: what a
subscriber receives is exactly the topic's messages in the database, in order, none lost or repeated at the
switch from history to live. The server here never polls (its poll interval is ten minutes): live messages
reach it only through the importer's commit notifications."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from hiero_sdk_python import Client, Network, TopicId, TopicMessageQuery
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.mirror import consensus_service_pb2_grpc as consensus_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2, timestamp_pb2
from tests.grpc_api.conftest import MESSAGE_DEFAULTS, TEST_SETTINGS, TOPIC, ServerThread, Topics
from tests.importer.importing import fetch, run
from tests.support import Ledger

from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.db.write import copy_rows
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import DEFAULT_START, INITIAL_BALANCES, simulate

NANOS = 1_000_000_000
FIRST_PART_END = DEFAULT_START + 14 * NANOS  # the first 7 record files (one every 2 s)


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stream")
    simulate(out, nodes=2, seconds=40, tps=40, seed=11)
    return out


@pytest.fixture(scope="module")
def notified_server(database: Prepared) -> Iterator[ServerThread]:
    server = ServerThread(dataclasses.replace(TEST_SETTINGS, grpc_poll_interval_ms=600_000), database)
    yield server
    server.stop()


def import_part(url: str, stream: Path, **options: Any) -> None:
    run(
        url,
        stream,
        book=stream / "addressbook.bin",
        initial_balances=stream / INITIAL_BALANCES,
        files_per_transaction=1,
        **options,
    )


def topic_messages(url: str, topic: int) -> list[tuple[int, int]]:
    rows = fetch(
        url,
        "select sequence_number, consensus_timestamp from topic_message where topic_id = $1 "
        "order by consensus_timestamp",
        topic,
    )
    return [(row["sequence_number"], row["consensus_timestamp"]) for row in rows]


def busiest_topic(url: str) -> int:
    rows = fetch(
        url, "select topic_id from topic_message group by topic_id order by count(*) desc, topic_id limit 1"
    )
    return int(rows[0]["topic_id"])


def wait_for(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def sdk_client(server: ServerThread) -> Client:
    return Client(Network(network="solo", mirror_address=server.address))


class RawSubscriber:
    """A plain stub reading ``limit`` messages of ``topic`` from the start of time, on its own channel."""

    def __init__(self, server: ServerThread, topic: int, limit: int) -> None:
        self.received: list[tuple[int, int]] = []
        self.channel = grpc.insecure_channel(server.address)
        request = consensus.ConsensusTopicQuery(
            topicID=basic_types_pb2.TopicID(topicNum=topic),
            consensusStartTime=timestamp_pb2.Timestamp(seconds=0),
            limit=limit,
        )
        self.call = consensus_grpc.ConsensusServiceStub(self.channel).subscribeTopic(request, timeout=60)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with contextlib.suppress(grpc.RpcError):
            for response in self.call:
                stamp = response.consensusTimestamp
                self.received.append((response.sequenceNumber, stamp.seconds * NANOS + stamp.nanos))

    def close(self) -> None:
        self.call.cancel()
        self.thread.join(5)
        self.channel.close()


def test_sdk_history_then_live_while_importing(
    database: Prepared, ledger: Ledger, stream: Path, notified_server: ServerThread
) -> None:
    url = database.owner_url
    import_part(url, stream, end=FIRST_PART_END)
    topic = busiest_topic(url)
    history = topic_messages(url, topic)
    assert history, "the first part of the stream has messages"

    received: list[Any] = []
    errors: list[Exception] = []
    client = sdk_client(notified_server)
    query = TopicMessageQuery(topic_id=TopicId(0, 0, topic), start_time=datetime.fromtimestamp(0, UTC))
    handle = query.subscribe(client, on_message=received.append, on_error=errors.append)
    try:
        wait_for(lambda: len(received) >= len(history))
        # subscribers joining while the importer commits file after file: each switch from history to live
        # happens with commits landing around it
        late: list[RawSubscriber] = []
        importer = threading.Thread(target=import_part, args=(url, stream), daemon=True)
        importer.start()
        while importer.is_alive():
            if len(late) < 12:
                late.append(RawSubscriber(notified_server, topic, 0))
            time.sleep(0.15)
        everything = topic_messages(url, topic)
        assert len(everything) > len(history), "the rest of the stream has messages of the topic"
        wait_for(
            lambda: len(received) >= len(everything) and all(len(sub.received) >= len(everything) for sub in late)
        )
    finally:
        handle.cancel()
        client.close()
        for subscriber in late:
            subscriber.close()
    assert not errors
    in_microseconds = [(sequence, timestamp // 1000) for sequence, timestamp in everything]
    assert [(message.sequence_number, _us(message.consensus_timestamp)) for message in received] == in_microseconds
    assert [message.sequence_number for message in received] == list(range(1, len(everything) + 1))
    assert len(late) > 1
    for subscriber in late:
        assert subscriber.received == everything
    assert notified_server.metrics.live_reads.labels("poll")._value.get() == 0


def test_first_live_message_after_history(
    database: Prepared, ledger: Ledger, stream: Path, notified_server: ServerThread
) -> None:
    # The reference's #11872: the first message after the switch from history to live was dropped. Here the
    # subscriber has read the whole history and waits for exactly one more message; the next commit brings it.
    url = database.owner_url
    import_part(url, stream, end=FIRST_PART_END)
    topic = busiest_topic(url)
    history = topic_messages(url, topic)
    reader = RawSubscriber(notified_server, topic, len(history) + 1)
    try:
        wait_for(lambda: len(reader.received) >= len(history))
        assert reader.received == history
        end = FIRST_PART_END
        while reader.thread.is_alive() and end < DEFAULT_START + 40 * NANOS:
            end += 2 * NANOS
            import_part(url, stream, end=end)  # one file at a time until one holds a message of the topic
            reader.thread.join(timeout=5 if len(topic_messages(url, topic)) > len(history) else 0.01)
        assert not reader.thread.is_alive()
        assert reader.call.code() == grpc.StatusCode.OK
        assert reader.received == topic_messages(url, topic)[: len(history) + 1]
    finally:
        reader.close()


def _us(moment: datetime) -> int:
    """The SDK's message time (a ``datetime``: microseconds)."""
    return int(moment.replace(microsecond=0).timestamp()) * 1_000_000 + moment.microsecond


def announce(url: str, rows: list[dict[str, Any]]) -> None:
    """Commit ``rows`` with the importer's announcement in the same transaction."""

    async def go() -> None:
        conn = await asyncpg.connect(url)
        try:
            async with conn.transaction():
                await copy_rows(conn, "topic_message", [{**MESSAGE_DEFAULTS, **row} for row in rows])
                await notify_commit(conn, rows[-1]["consensus_timestamp"])
        finally:
            await conn.close()

    asyncio.run(go())


def test_listening_connection_lost_and_regained(
    database: Prepared, topics: Topics, notified_server: ServerThread
) -> None:
    """The server's listening connection is ended (a database restart, a proxy): it listens again at once, and
    the next announcement is heard (this server never polls)."""
    url = database.owner_url
    reader = RawSubscriber(notified_server, TOPIC, 2)
    try:
        time.sleep(0.5)
        announce(url, topics.message_rows(1, at=time.time_ns()))
        wait_for(lambda: len(reader.received) == 1, 10)
        ended = fetch(
            url,
            "select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen%' and pid <> "
            "pg_backend_pid()",
        )
        assert ended and all(row[0] for row in ended)
        time.sleep(1.0)
        announce(url, topics.message_rows(1, at=time.time_ns()))
        reader.thread.join(10)
        assert [sequence for sequence, _ in reader.received] == [1, 2]
        assert reader.call.code() == grpc.StatusCode.OK
    finally:
        reader.close()
