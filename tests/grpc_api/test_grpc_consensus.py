"""subscribeTopic against the real server, ported from the reference's ``ConsensusControllerTest`` and
``TopicMessageServiceTest`` (``grpc/src/test/java/org/hiero/mirror/grpc/``): each test names its source and
takes the expected values from it. Live messages are written while the stream is open (the server polls every
100 ms in these tests and, as in the reference's test configuration, ``endTimeInterval`` is 100 ms)."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import grpc
import pytest
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.mirror import consensus_service_pb2_grpc as consensus_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2, timestamp_pb2
from tests.grpc_api.conftest import (
    TEST_SETTINGS,
    TOPIC,
    ServerThread,
    Topics,
    expected_response,
    subscribe,
    write_messages,
)

from ledgermirror.runtime import Prepared

INT64_MAX = (1 << 63) - 1
NANOS = 1_000_000_000
Stub = consensus_grpc.ConsensusServiceStub


def query(
    topic: int | None = TOPIC,
    start: int | None = 0,
    end: int | None = None,
    limit: int = 0,
    end_seconds: int | None = None,
) -> consensus.ConsensusTopicQuery:
    request = consensus.ConsensusTopicQuery(limit=limit)
    if topic is not None:
        request.topicID.CopyFrom(basic_types_pb2.TopicID(topicNum=topic))
    if start is not None:
        request.consensusStartTime.CopyFrom(timestamp(start))
    if end is not None:
        request.consensusEndTime.CopyFrom(timestamp(end))
    if end_seconds is not None:
        request.consensusEndTime.CopyFrom(timestamp_pb2.Timestamp(seconds=end_seconds))
    return request


def timestamp(ns: int) -> timestamp_pb2.Timestamp:
    seconds, nanos = divmod(ns, NANOS)
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


# ConsensusControllerTest -----------------------------------------------------------------------------------


def test_missing_topic_id(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.missingTopicID: an empty query is INVALID_ARGUMENT
    outcome = subscribe(consensus_stub, consensus.ConsensusTopicQuery())
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert outcome.details == "subscribeTopic.filter.topicId: must not be null"


def test_invalid_topic_id(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.invalidTopicID: topicNum -1 -> INVALID_ARGUMENT containing "Invalid entity ID"
    outcome = subscribe(consensus_stub, query(topic=-1))
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert outcome.details == "Invalid entity ID: 0.0.-1"


def test_max_consensus_end_time(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.maxConsensusEndTime: 1 message; start 0, end seconds = int64 max, limit 1 -> [msg1]
    rows = topics.messages(1)
    outcome = subscribe(consensus_stub, query(start=0, end_seconds=INT64_MAX, limit=1))
    assert outcome.code == grpc.StatusCode.OK
    assert outcome.responses == [expected_response(rows[0])]


def test_max_consensus_start_time(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.maxConsensusStartTime: start seconds = int64 max converts without overflow (the
    # reference only checks its log); a start after now is then refused
    request = consensus.ConsensusTopicQuery(
        topicID=basic_types_pb2.TopicID(topicNum=TOPIC),
        consensusStartTime=timestamp_pb2.Timestamp(seconds=INT64_MAX),
        limit=1,
    )
    outcome = subscribe(consensus_stub, request)
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert outcome.details == "subscribeTopic.filter.validStartTime: Start time must be before the current time"


def test_constraint_violation(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.constraintViolationException: empty TopicID, limit -1 (uint64 max on the wire)
    request = consensus.ConsensusTopicQuery(topicID=basic_types_pb2.TopicID(), limit=2**64 - 1)
    outcome = subscribe(consensus_stub, request)
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "limit: must be greater than or equal to 0" in outcome.details


def test_subscribe_topic_blocking(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.subscribeTopicBlocking: 3 messages; start 0, limit 3 -> messages 1-3, then OK
    rows = topics.messages(3)
    outcome = subscribe(consensus_stub, query(start=0, limit=3))
    assert outcome.code == grpc.StatusCode.OK
    assert outcome.responses == [expected_response(row) for row in rows]


def test_subscribe_topic_query_long_overflow_end_time(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.subscribeTopicQueryLongOverflowEndTime: 3 messages + 2 in the future; start
    # (1 s, 2 ns), end (31556889864403199 s, 999999999 ns), limit 5 -> 5 responses, the first three msgs 1-3
    rows = topics.messages(3)
    future = topics.message_rows(2, at=time.time_ns() + NANOS)
    request = consensus.ConsensusTopicQuery(
        topicID=basic_types_pb2.TopicID(topicNum=TOPIC),
        consensusStartTime=timestamp_pb2.Timestamp(seconds=1, nanos=2),
        consensusEndTime=timestamp_pb2.Timestamp(seconds=31556889864403199, nanos=999999999),
        limit=5,
    )
    topics.insert_later(future, 0.3)
    outcome = subscribe(consensus_stub, request)
    assert outcome.code == grpc.StatusCode.OK
    assert len(outcome.responses) == 5
    assert outcome.responses[:3] == [expected_response(row) for row in rows]


def test_subscribe_verify_sequence(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.subscribeVerifySequence: 3 messages + 4 live; start 0, limit 7 -> 1..7
    topics.messages(3)
    topics.insert_later(topics.message_rows(4, at=time.time_ns() + NANOS // 2), 0.3)
    outcome = subscribe(consensus_stub, query(start=0, limit=7))
    assert outcome.code == grpc.StatusCode.OK
    assert outcome.sequences == [1, 2, 3, 4, 5, 6, 7]


def test_fragmented_messages_group_across_historic_and_incoming(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.fragmentedMessagesGroupAcrossHistoricAndIncoming: seqs 1, 4, 8 plain; 2-3 chunks
    # 1/2, 2/2; 5-7 chunks 1/3, 2/3, 3/3 with payer and valid start (6: NULL initial transaction id, 7: the
    # undecodable bytes 01 02); 6-8 arrive live -> chunk numbers [1, 1, 2, 1, 1, 2, 3, 1], no error
    payer_tx = basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(accountNum=1001),
        transactionValidStart=timestamp_pb2.Timestamp(seconds=7),
    ).SerializeToString()
    now = time.time_ns()
    chunked = {"payer_account_id": 1001, "valid_start_timestamp": 7 * NANOS}
    history = [
        *topics.message_rows(1, at=now - 100),
        *topics.message_rows(1, at=now - 99, chunk_num=1, chunk_total=2, initial_transaction_id=payer_tx),
        *topics.message_rows(1, at=now - 98, chunk_num=2, chunk_total=2, initial_transaction_id=payer_tx),
        *topics.message_rows(1, at=now - 97),
        *topics.message_rows(
            1, at=now - 96, chunk_num=1, chunk_total=3, initial_transaction_id=payer_tx, **chunked
        ),
    ]
    write_messages(topics.url, history)
    live = [
        *topics.message_rows(
            1, at=now + NANOS // 2, chunk_num=2, chunk_total=3, initial_transaction_id=None, **chunked
        ),
        *topics.message_rows(
            1, at=now + NANOS // 2 + 1, chunk_num=3, chunk_total=3, initial_transaction_id=bytes([1, 2]), **chunked
        ),
        *topics.message_rows(1, at=now + NANOS // 2 + 2),
    ]
    topics.insert_later(live, 0.3)
    outcome = subscribe(consensus_stub, query(start=0, limit=8))
    assert outcome.code == grpc.StatusCode.OK
    assert [response.chunkInfo.number for response in outcome.responses] == [1, 1, 2, 1, 1, 2, 3, 1]
    expected_tx = basic_types_pb2.TransactionID.FromString(payer_tx)
    assert [response.chunkInfo.initialTransactionID for response in outcome.responses[4:7]] == [expected_tx] * 3


def test_null_running_hash_version(consensus_stub: Stub, topics: Topics) -> None:
    # ConsensusControllerTest.nullRunningHashVersion: NULL version -> runningHashVersion 3
    topics.messages(1, running_hash_version=None)
    outcome = subscribe(consensus_stub, query(start=0, end_seconds=INT64_MAX, limit=1))
    assert [response.runningHashVersion for response in outcome.responses] == [3]


# TopicMessageServiceTest -----------------------------------------------------------------------------------


def test_invalid_filter(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.invalidFilter: start -1, no topic, limit -1 -> all three violations
    request = consensus.ConsensusTopicQuery(consensusStartTime=timestamp_pb2.Timestamp(nanos=-1), limit=2**64 - 1)
    outcome = subscribe(consensus_stub, request)
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    for text in (
        "limit: must be greater than or equal to 0",
        "startTime: must be greater than or equal to 0",
        "topicId: must not be null",
    ):
        assert text in outcome.details


@pytest.mark.parametrize(
    "end_offset", [-86_400 * NANOS, 0], ids=["endTimeBeforeStartTime", "endTimeEqualsStartTime"]
)
def test_end_time_not_after_start_time(consensus_stub: Stub, topics: Topics, end_offset: int) -> None:
    # TopicMessageServiceTest.endTimeBeforeStartTime / endTimeEqualsStartTime
    now = time.time_ns()
    outcome = subscribe(consensus_stub, query(start=now, end=now + end_offset))
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert outcome.details == "subscribeTopic.filter.validEndTime: End time must be after start time"


def test_start_time_after_now(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.startTimeAfterNow: start now + 1 h
    outcome = subscribe(consensus_stub, query(start=time.time_ns() + 3600 * NANOS))
    assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "Start time must be before the current time" in outcome.details


def test_topic_not_found(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.topicNotFound: 0.0.999 -> NOT_FOUND (ProtoUtil: "<id> does not exist")
    outcome = subscribe(consensus_stub, query(topic=999))
    assert (outcome.code, outcome.details) == (grpc.StatusCode.NOT_FOUND, "0.0.999 does not exist")


def test_topic_zero_not_found(consensus_stub: Stub, topics: Topics) -> None:
    # the reference's validation table: topic 0.0.0 passes validation and is NOT_FOUND
    outcome = subscribe(consensus_stub, query(topic=0))
    assert (outcome.code, outcome.details) == (grpc.StatusCode.NOT_FOUND, "0.0.0 does not exist")


def test_invalid_topic(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.invalidTopic: an entity of type ACCOUNT -> INVALID_ARGUMENT "Not a valid topic"
    topics.topic(num=200, kind="ACCOUNT")
    outcome = subscribe(consensus_stub, query(topic=200))
    assert (outcome.code, outcome.details) == (grpc.StatusCode.INVALID_ARGUMENT, "Not a valid topic")


def test_no_messages(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.noMessages: nothing, the stream stays open
    outcome = subscribe(consensus_stub, query(start=None), seconds=1)
    assert (outcome.responses, outcome.code) == ([], grpc.StatusCode.DEADLINE_EXCEEDED)


def test_no_messages_with_past_end_time(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.noMessagesWithPastEndTime: start 0, end 1 -> completes with nothing
    outcome = subscribe(consensus_stub, query(start=0, end=1))
    assert (outcome.responses, outcome.code) == ([], grpc.StatusCode.OK)


def test_no_messages_with_future_end_time(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.noMessagesWithFutureEndTime: end now + 250 ms -> completes with nothing
    now = time.time_ns()
    outcome = subscribe(consensus_stub, query(start=now, end=now + NANOS // 4))
    assert (outcome.responses, outcome.code) == ([], grpc.StatusCode.OK)


def test_historical_messages(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.historicalMessages: 3 messages; start 0 -> 1-3, stays open
    topics.messages(3)
    outcome = subscribe(consensus_stub, query(start=0), seconds=1.5)
    assert (outcome.sequences, outcome.code) == ([1, 2, 3], grpc.StatusCode.DEADLINE_EXCEEDED)


def test_historical_messages_with_end_time_after(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.historicalMessagesWithEndTimeAfter: end = ts3 + 1 -> 1-3, complete
    rows = topics.messages(3)
    outcome = subscribe(consensus_stub, query(start=0, end=rows[2]["consensus_timestamp"] + 1))
    assert (outcome.sequences, outcome.code) == ([1, 2, 3], grpc.StatusCode.OK)


def test_historical_messages_with_end_time_equals(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.historicalMessagesWithEndTimeEquals: 4 messages; end = ts4 -> 1-3 (exclusive)
    rows = topics.messages(4)
    outcome = subscribe(consensus_stub, query(start=0, end=rows[3]["consensus_timestamp"]))
    assert (outcome.sequences, outcome.code) == ([1, 2, 3], grpc.StatusCode.OK)


def test_historical_messages_with_limit(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.historicalMessagesWithLimit: 3 messages; limit 2 -> 1, 2, complete
    topics.messages(3)
    outcome = subscribe(consensus_stub, query(start=0, limit=2))
    assert (outcome.sequences, outcome.code) == ([1, 2], grpc.StatusCode.OK)


def test_incoming_messages(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.incomingMessages: subscribe from 0, then 3 future messages -> 1, 2, 3
    topics.insert_later(topics.message_rows(3, at=time.time_ns() + NANOS), 0.3)
    outcome = subscribe(consensus_stub, query(start=0), seconds=2)
    assert outcome.sequences == [1, 2, 3]


def test_incoming_messages_with_limit(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.incomingMessagesWithLimit: limit 2, then 3 live -> 1, 2, complete
    topics.insert_later(topics.message_rows(3, at=time.time_ns() + NANOS), 0.3)
    outcome = subscribe(consensus_stub, query(start=0, limit=2))
    assert (outcome.sequences, outcome.code) == ([1, 2], grpc.StatusCode.OK)


def test_incoming_messages_with_end_time_before(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.incomingMessagesWithEndTimeBefore: end = now + 2 s (the reference: 5 s); 2
    # messages at end - 2, end - 1 arrive after 50 ms -> 1, 2, complete (by the end-time rule)
    now = time.time_ns()
    end = now + 2 * NANOS
    topics.insert_later(topics.message_rows(2, at=end - 2), 0.05)
    outcome = subscribe(consensus_stub, query(start=now, end=end))
    assert (outcome.sequences, outcome.code) == ([1, 2], grpc.StatusCode.OK)


def test_incoming_messages_with_end_time_equals(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.incomingMessagesWithEndTimeEquals: live at future - 2, -1, future -> 1, 2, complete
    now = time.time_ns()
    future = now + NANOS
    topics.insert_later(topics.message_rows(3, at=future - 2), 0.2)
    outcome = subscribe(consensus_stub, query(start=now, end=future))
    assert (outcome.sequences, outcome.code) == ([1, 2], grpc.StatusCode.OK)


def test_both_messages(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.bothMessages: 3 now; limit 5; then 3 future -> 1..5, complete
    topics.messages(3)
    topics.insert_later(topics.message_rows(3, at=time.time_ns() + NANOS), 0.3)
    outcome = subscribe(consensus_stub, query(start=0, limit=5))
    assert (outcome.sequences, outcome.code) == ([1, 2, 3, 4, 5], grpc.StatusCode.OK)


def test_both_messages_with_topic_id(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.bothMessagesWithTopicId: topics 0.0.1 and 0.0.2 each with seq 1; live: topic 1
    # seq 2, topic 2 seq 2, topic 3 seq 1 -> the subscriber of 0.0.1 gets 1, 2
    topics.topic(1)
    topics.topic(2)
    now = time.time_ns()
    write_messages(
        topics.url,
        [
            {"topic_id": 1, "sequence_number": 1, "consensus_timestamp": now},
            {"topic_id": 2, "sequence_number": 1, "consensus_timestamp": now + 1},
        ],
    )
    live = [
        {"topic_id": 1, "sequence_number": 2, "consensus_timestamp": now + NANOS},
        {"topic_id": 2, "sequence_number": 2, "consensus_timestamp": now + NANOS + 1},
        {"topic_id": 3, "sequence_number": 1, "consensus_timestamp": now + NANOS + 2},
    ]
    topics.insert_later(live, 0.3)
    outcome = subscribe(consensus_stub, query(topic=1, start=0), seconds=2)
    assert outcome.sequences == [1, 2]


def test_missing_messages_filled_from_the_database(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.missingMessages (mocked in the reference: the listener yields 1 then 4, the gap
    # query 2, 3 -> 1, 2, 3, 4). Here for real: message 4 is committed first and 2, 3 (earlier consensus times,
    # as a second importer would commit them) shortly after; the server holds 4 until 2 and 3 are read.
    now = time.time_ns()
    first = topics.messages(1, at=now)
    rows = topics.message_rows(3, at=now + NANOS // 2)
    topics.insert_later([rows[2]], 0.3)
    topics.insert_later(rows[:2], 0.45)
    outcome = subscribe(consensus_stub, query(start=first[0]["consensus_timestamp"], limit=4))
    assert (outcome.sequences, outcome.code) == ([1, 2, 3, 4], grpc.StatusCode.OK)


def test_missing_messages_none_retrieved(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.missingMessagesFromListenerNoneRetrieved: the gap cannot be filled -> the
    # messages before it, then the out-of-order error (UNKNOWN "Unknown error")
    now = time.time_ns()
    topics.messages(2, at=now)
    rows = topics.message_rows(2, at=now + NANOS // 2)
    topics.insert_later([rows[1]], 0.3)  # sequence 4 without 3
    outcome = subscribe(consensus_stub, query(start=now))
    assert (outcome.sequences, outcome.code, outcome.details) == ([1, 2], grpc.StatusCode.UNKNOWN, "Unknown error")


def test_duplicate_sequence_numbers_dropped(consensus_stub: Stub, topics: Topics) -> None:
    # TopicMessageServiceTest.duplicateMessages (mocked in the reference: history (seq, ts) (1,0), (1,1), (2,2),
    # (1,3) -> 1, 2, complete)
    now = time.time_ns()
    rows = [
        {"topic_id": TOPIC, "sequence_number": seq, "consensus_timestamp": now + ts}
        for seq, ts in ((1, 0), (1, 1), (2, 2), (1, 3))
    ]
    write_messages(topics.url, rows)
    outcome = subscribe(consensus_stub, query(start=now, end=now + 4))
    assert (outcome.sequences, outcome.code) == ([1, 2], grpc.StatusCode.OK)


# PollingTopicMessageRetrieverTest, AbstractTopicListenerTest, AbstractSharedTopicListenerTest -------------------


def test_start_time_equals(consensus_stub: Stub, topics: Topics) -> None:
    # PollingTopicMessageRetrieverTest.startTimeEquals: a message at now, start now -> [1] (start inclusive)
    now = time.time_ns() - NANOS
    topics.messages(1, at=now)
    assert subscribe(consensus_stub, query(start=now), seconds=1).sequences == [1]


def test_start_time_after(consensus_stub: Stub, topics: Topics) -> None:
    # PollingTopicMessageRetrieverTest.startTimeAfter: a message at now - 1, start now -> nothing
    now = time.time_ns() - NANOS
    topics.messages(1, at=now - 1)
    assert subscribe(consensus_stub, query(start=now), seconds=1).sequences == []


def test_retriever_topic_id(consensus_stub: Stub, topics: Topics) -> None:
    # PollingTopicMessageRetrieverTest.topicId: messages of 0.0.1/2/3 with sequence 1/2/3; filter 0.0.2 -> [2]
    for num in (1, 2, 3):
        topics.topic(num)
    now = time.time_ns() - NANOS
    write_messages(
        topics.url,
        [{"topic_id": num, "sequence_number": num, "consensus_timestamp": now + num} for num in (1, 2, 3)],
    )
    assert subscribe(consensus_stub, query(topic=2, start=0), seconds=1).sequences == [2]


def test_greater_than_page_size(consensus_stub: Stub, topics: Topics) -> None:
    # PollingTopicMessageRetrieverTest.greaterThanPageSize (page 2 there, 3 messages): our page is 1,000 rows,
    # so 2,500 messages, every one in order
    topics.messages(2500)
    outcome = subscribe(consensus_stub, query(start=0, limit=2500))
    assert (outcome.sequences, outcome.code) == (list(range(1, 2501)), grpc.StatusCode.OK)


def test_multiple_subscribers(consensus_stub: Stub, topics: Topics) -> None:
    # AbstractTopicListenerTest.multipleSubscribers: two topics; t1:1, t1:2, t2:7, t2:8, t1:3 published ->
    # subscriber 1 gets 1, 2, 3 and subscriber 2 gets 7, 8
    topics.topic(1)
    topics.topic(2)
    now = time.time_ns()
    later = now + NANOS
    published = [(1, 1), (1, 2), (2, 7), (2, 8), (1, 3)]
    topics.insert_later(
        [
            {"topic_id": topic, "sequence_number": seq, "consensus_timestamp": later + index}
            for index, (topic, seq) in enumerate(published)
        ],
        0.3,
    )
    outcomes: dict[int, Any] = {}

    def read(topic: int, limit: int) -> None:
        outcomes[topic] = subscribe(consensus_stub, query(topic=topic, start=now, limit=limit))

    threads = [threading.Thread(target=read, args=args) for args in ((1, 3), (2, 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert outcomes[1].sequences == [1, 2, 3]
    assert outcomes[2].sequences == [7, 8]


def test_slow_subscriber_overflow(database: Prepared, topics: Topics) -> None:
    # AbstractSharedTopicListenerTest.slowSubscriberOverflowException: a subscriber that stops reading falls
    # more than the buffer (16 there, 2,000 here) behind and ends DEADLINE_EXCEEDED "Client lags too much behind.
    # Please retry later"; a fast subscriber of the same topic gets every message
    server = ServerThread(dataclasses.replace(TEST_SETTINGS, grpc_subscriber_buffer=2000), database)
    try:
        own_connection = [("grpc.use_local_subchannel_pool", 1)]  # HTTP/2 windows of their own
        with (
            grpc.insecure_channel(server.address, options=own_connection) as slow_channel,
            grpc.insecure_channel(server.address, options=own_connection) as fast_channel,
        ):
            now = time.time_ns()
            slow = consensus_grpc.ConsensusServiceStub(slow_channel).subscribeTopic(query(start=now), timeout=60)
            fast_stub = consensus_grpc.ConsensusServiceStub(fast_channel)
            fast_outcome: list[Any] = []
            fast = threading.Thread(
                target=lambda: fast_outcome.append(subscribe(fast_stub, query(start=now, limit=6000), seconds=60))
            )
            fast.start()
            time.sleep(0.5)
            big = {"message": b"x" * 4000}
            for batch in range(20):  # 24 MB in all: far more than HTTP/2 lets through to a reader that stalls
                write_messages(topics.url, topics.message_rows(300, at=now + NANOS + batch * 300, **big))
                time.sleep(0.05)
            fast.join(60)
            assert fast_outcome[0].sequences == list(range(1, 6001)), (
                fast_outcome[0].code,
                fast_outcome[0].details,
            )
            with pytest.raises(grpc.RpcError) as raised:
                for _ in slow:
                    pass
            assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert raised.value.details() == "Client lags too much behind. Please retry later"
    finally:
        server.stop()
