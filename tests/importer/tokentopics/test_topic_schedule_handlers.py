"""Consensus topics and messages, schedules with their signatures and execution, and airdrops, imported from
record items built with HAPI messages (importer-transaction-handlers.md §3.2 items 13-14, §3.3, §3.5, §5.1)."""

from __future__ import annotations

import json

import pytest
from google.protobuf import wrappers_pb2 as wrappers
from tests.importer.tokentopics.records import (
    INVALID_SIGNATURE,
    SECOND,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    item,
    key,
    key_bytes,
    module,
    ranges,
    run,
    schedule,
    token,
    token_transfers,
    topic,
    transaction_id,
)
from tests.support import Ledger

from ledgermirror.runtime import Prepared

TOPIC, SCHEDULE, TOKEN = 7001, 7002, 7003
ALICE, BOB, COLLECTOR = 1002, 1003, 1004
_topic_create = module("consensus_create_topic_pb2").ConsensusCreateTopicTransactionBody
_topic_update = module("consensus_update_topic_pb2").ConsensusUpdateTopicTransactionBody
_submit = module("consensus_submit_message_pb2")
_custom = module("custom_fees_pb2")
_schedule_create = module("schedule_create_pb2").ScheduleCreateTransactionBody
_schedulable = module("schedulable_transaction_body_pb2").SchedulableTransactionBody


@pytest.fixture
def url(database: Prepared, ledger: Ledger) -> str:
    return database.owner_url


def _fee(amount: int, denominating: int | None = None) -> object:
    fixed = _custom.FixedFee(amount=amount)
    if denominating is not None:
        fixed.denominating_token_id.CopyFrom(token(denominating))
    return _custom.FixedCustomFee(fixed_fee=fixed, fee_collector_account_id=account(COLLECTOR))


def test_topic_create_update_delete(url: str) -> None:
    created, updated, deleted = T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND
    create = _topic_create(
        memo="news",
        adminKey=key(1),
        submitKey=key(2),
        autoRenewAccount=account(ALICE),
        autoRenewPeriod=module("duration_pb2").Duration(seconds=7_776_000),
        custom_fees=[_fee(10), _fee(3, denominating=TOKEN)],
    )
    update = _topic_update(
        topicID=topic(TOPIC),
        memo=wrappers.StringValue(value="more news"),
        submitKey=key(3),
        fee_exempt_key_list=_custom.FeeExemptKeyList(keys=[key(4)]),
        custom_fees=_custom.FixedCustomFeeList(),
    )
    run(
        url,
        item(body("consensusCreateTopic", create, at=created), at=created, receipt={"topicID": topic(TOPIC)}),
        item(body("consensusUpdateTopic", update, at=updated), at=updated),
    )
    entity = fetch(url, "select * from entity where id = $1", encoded(TOPIC))[0]
    assert (entity["type"], entity["memo"], entity["created_timestamp"]) == ("TOPIC", "more news", created)
    assert (entity["auto_renew_account_id"], entity["auto_renew_period"]) == (encoded(ALICE), 7_776_000)
    current = fetch(url, "select * from topic")[0]
    assert (current["id"], current["created_timestamp"]) == (encoded(TOPIC), created)
    assert (current["admin_key"], current["submit_key"], current["fee_schedule_key"]) == (
        key_bytes(1),
        key_bytes(3),
        None,
    )
    assert current["fee_exempt_key_list"] == _custom.FeeExemptKeyList(keys=[key(4)]).SerializeToString()
    history = fetch(url, "select * from topic_history")
    assert [(row["submit_key"], row["fee_exempt_key_list"]) for row in history] == [(key_bytes(2), b"")]
    assert ranges(url, "topic", "id = $1", encoded(TOPIC)) == [(created, updated), (updated, None)]

    fees = fetch(url, "select fixed_fees from custom_fee_history")
    assert json.loads(fees[0]["fixed_fees"]) == [
        {"all_collectors_are_exempt": False, "amount": 10, "collector_account_id": encoded(COLLECTOR)},
        {
            "all_collectors_are_exempt": False,
            "amount": 3,
            "collector_account_id": encoded(COLLECTOR),
            "denominating_token_id": encoded(TOKEN),
        },
    ]
    # the update cleared them: ConsensusUpdateTopicTransactionHandler.updateCustomFee writes its (empty) list
    assert fetch(url, "select fixed_fees from custom_fee") == [{"fixed_fees": "[]"}]

    delete = module("consensus_delete_topic_pb2").ConsensusDeleteTopicTransactionBody(topicID=topic(TOPIC))
    run(url, item(body("consensusDeleteTopic", delete, at=deleted), at=deleted))
    assert fetch(url, "select deleted, memo from entity where id = $1", encoded(TOPIC)) == [
        {"deleted": True, "memo": "more news"}
    ]
    assert fetch(url, "select count(*) as n from topic_history") == [{"n": 1}]  # the topic row is untouched


def _message(
    at: int, sequence: int, *, version: int = 3, chunk: tuple[int, int] | None = None, status: int = 22
) -> object:
    message = _submit.ConsensusSubmitMessageTransactionBody(topicID=topic(TOPIC), message=f"m{sequence}".encode())
    if chunk is not None:
        message.chunkInfo.CopyFrom(
            _submit.ConsensusMessageChunkInfo(
                initialTransactionID=transaction_id(ALICE, T0), number=chunk[0], total=chunk[1]
            )
        )
    receipt = {
        "topicSequenceNumber": sequence,
        "topicRunningHash": bytes([sequence]) * 48,
        "topicRunningHashVersion": version,
    }
    return item(
        body("consensusSubmitMessage", message, payer=ALICE, at=at),
        at=at,
        status=status,
        receipt=receipt if status == 22 else {},
    )


def test_submit_message_writes_topic_messages(url: str) -> None:
    stamps = [T0 + n * SECOND for n in range(1, 5)]
    run(
        url,
        _message(stamps[0], 1),
        _message(stamps[1], 2, version=2, chunk=(1, 2)),
        _message(stamps[2], 3, version=0, chunk=(2, 2)),
        _message(stamps[3], 4, status=INVALID_SIGNATURE),
    )
    rows = fetch(url, "select * from topic_message order by consensus_timestamp")
    assert [row["consensus_timestamp"] for row in rows] == stamps[:3]
    assert [(row["sequence_number"], row["message"]) for row in rows] == [(1, b"m1"), (2, b"m2"), (3, b"m3")]
    assert [row["running_hash_version"] for row in rows] == [None, 2, 1]
    assert [(row["chunk_num"], row["chunk_total"]) for row in rows] == [(None, None), (1, 2), (2, 2)]
    assert rows[0]["initial_transaction_id"] is None
    assert rows[1]["initial_transaction_id"] == transaction_id(ALICE, T0).SerializeToString()
    assert {row["topic_id"] for row in rows} == {encoded(TOPIC)}
    assert {row["payer_account_id"] for row in rows} == {encoded(ALICE)}
    assert rows[2]["running_hash"] == bytes([3]) * 48
    assert {row["valid_start_timestamp"] for row in rows} == {None}
    # every message, failed or not, has its transaction; submit messages have no transaction_hash row
    assert fetch(url, "select entity_id, type from transaction where consensus_timestamp = $1", stamps[3]) == [
        {"entity_id": encoded(TOPIC), "type": 27}
    ]
    assert fetch(url, "select count(*) as n from transaction_hash") == [{"n": 0}]


def _create_schedule(
    at: int, *, signatures: list[tuple[bytes, bytes]], payer: int | None = BOB, number: int = SCHEDULE
) -> object:
    scheduled = _schedulable(
        transactionFee=10,
        cryptoTransfer=module("crypto_transfer_pb2").CryptoTransferTransactionBody(),
    )
    create = _schedule_create(
        scheduledTransactionBody=scheduled,
        memo="later",
        adminKey=key(8),
        expiration_time=module("timestamp_pb2").Timestamp(seconds=T0 // SECOND + 3600),
        wait_for_expiry=True,
    )
    if payer is not None:
        create.payerAccountID.CopyFrom(account(payer))
    return item(
        body("scheduleCreate", create, payer=ALICE, at=at),
        at=at,
        receipt={"scheduleID": schedule(number)},
        signatures=signatures,
    )


def _scheduled_child(at: int, schedule_num: int, status: int = 22) -> object:
    child = body("cryptoTransfer", module("crypto_transfer_pb2").CryptoTransferTransactionBody(), payer=BOB, at=at)
    child.transactionID.scheduled = True
    return item(child, at=at, status=status, scheduleRef=schedule(schedule_num))


def test_schedule_create_sign_execute_and_delete(url: str) -> None:
    created, signed, executed, deleted = (T0 + n * SECOND for n in range(1, 5))
    sign = module("schedule_sign_pb2").ScheduleSignTransactionBody(scheduleID=schedule(SCHEDULE))
    run(
        url,
        _create_schedule(
            created, signatures=[(b"\xaa", b"\x01" * 64), (b"\xbb", b"\x02" * 64), (b"\xaa", b"\x03" * 64)]
        ),
        item(body("scheduleSign", sign, at=signed), at=signed, signatures=[(b"\xcc", b"\x04" * 64)]),
    )
    row = fetch(url, "select * from schedule")[0]
    assert row == {
        "schedule_id": encoded(SCHEDULE),
        "consensus_timestamp": created,
        "creator_account_id": encoded(ALICE),
        "payer_account_id": encoded(BOB),
        "executed_timestamp": None,
        "expiration_time": T0 + 3600 * SECOND,
        "transaction_body": _schedulable(
            transactionFee=10, cryptoTransfer=module("crypto_transfer_pb2").CryptoTransferTransactionBody()
        ).SerializeToString(),
        "wait_for_expiry": True,
    }
    entity = fetch(url, "select * from entity where id = $1", encoded(SCHEDULE))[0]
    assert (entity["type"], entity["memo"], entity["key"], entity["deleted"]) == (
        "SCHEDULE",
        "later",
        key_bytes(8),
        False,
    )
    signatures = fetch(url, "select * from transaction_signature order by consensus_timestamp, public_key_prefix")
    assert [
        (row["consensus_timestamp"], row["public_key_prefix"], row["signature"], row["type"], row["entity_id"])
        for row in signatures
    ] == [
        (created, b"\xaa", b"\x01" * 64, 3, encoded(SCHEDULE)),  # the first of two pairs with one prefix
        (created, b"\xbb", b"\x02" * 64, 3, encoded(SCHEDULE)),
        (signed, b"\xcc", b"\x04" * 64, 3, encoded(SCHEDULE)),
    ]

    # a failed scheduled child still executes its schedule; a child of an unknown schedule writes nothing
    run(url, _scheduled_child(executed, SCHEDULE, status=INVALID_SIGNATURE), _scheduled_child(executed + 1, 9999))
    assert fetch(url, "select schedule_id, executed_timestamp from schedule") == [
        {"schedule_id": encoded(SCHEDULE), "executed_timestamp": executed}
    ]
    assert fetch(url, "select scheduled from transaction where consensus_timestamp = $1", executed) == [
        {"scheduled": True}
    ]

    delete = module("schedule_delete_pb2").ScheduleDeleteTransactionBody(scheduleID=schedule(SCHEDULE))
    run(url, item(body("scheduleDelete", delete, at=deleted), at=deleted))
    assert fetch(url, "select deleted from entity where id = $1", encoded(SCHEDULE)) == [{"deleted": True}]


def test_a_schedule_created_and_executed_in_one_file(url: str) -> None:
    created, executed = T0 + SECOND, T0 + 2 * SECOND
    run(url, _create_schedule(created, signatures=[], payer=None), _scheduled_child(executed, SCHEDULE))
    assert fetch(url, "select creator_account_id, payer_account_id, executed_timestamp from schedule") == [
        {"creator_account_id": encoded(ALICE), "payer_account_id": encoded(ALICE), "executed_timestamp": executed}
    ]
    assert fetch(url, "select count(*) as n from transaction_signature") == [{"n": 0}]


def _pending(sender: int, receiver: int, *, serial: int | None = None) -> object:
    if serial is None:
        return basic.PendingAirdropId(
            sender_id=account(sender), receiver_id=account(receiver), fungible_token_type=token(TOKEN)
        )
    return basic.PendingAirdropId(
        sender_id=account(sender),
        receiver_id=account(receiver),
        non_fungible_token=basic.NftID(token_ID=token(TOKEN), serial_number=serial),
    )


def test_airdrops_pending_claimed_and_cancelled(url: str) -> None:
    for num in (ALICE, BOB):
        fetch(
            url,
            "insert into entity (id, num, realm, shard, type, timestamp_range) "
            "values ($1, $2, 0, 0, 'ACCOUNT', '[0,)')",
            encoded(num),
            num,
        )
    fetch(
        url,
        "insert into token_account (account_id, token_id, associated, balance, created_timestamp, "
        "timestamp_range) values ($1, $2, true, 100, 0, '[0,)')",
        encoded(ALICE),
        encoded(TOKEN),
    )
    dropped, claimed, cancelled = T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND
    record_airdrop = module("transaction_record_pb2").PendingAirdropRecord
    airdrop = module("token_airdrop_pb2").TokenAirdropTransactionBody(
        token_transfers=[token_transfers(TOKEN, [(ALICE, -40), (BOB, 40)])]
    )
    claim = module("token_claim_airdrop_pb2").TokenClaimAirdropTransactionBody(
        pending_airdrops=[_pending(ALICE, BOB)]
    )
    cancel = module("token_cancel_airdrop_pb2").TokenCancelAirdropTransactionBody(
        pending_airdrops=[_pending(ALICE, BOB, serial=3)]
    )
    run(
        url,
        item(
            body("tokenAirdrop", airdrop, payer=ALICE, at=dropped),
            at=dropped,
            new_pending_airdrops=[
                record_airdrop(
                    pending_airdrop_id=_pending(ALICE, BOB),
                    pending_airdrop_value=basic.PendingAirdropValue(amount=40),
                ),
                record_airdrop(pending_airdrop_id=_pending(ALICE, BOB, serial=3)),
            ],
        ),
        item(
            body("tokenClaimAirdrop", claim, payer=BOB, at=claimed),
            at=claimed,
            tokenTransferLists=[token_transfers(TOKEN, [(ALICE, -40), (BOB, 40)])],
        ),
        item(body("tokenCancelAirdrop", cancel, payer=ALICE, at=cancelled), at=cancelled),
    )
    assert fetch(url, "select entity_id from transaction where consensus_timestamp = $1", dropped) == [
        {"entity_id": None}
    ]
    current = fetch(url, "select serial_number, amount, state from token_airdrop order by serial_number")
    assert current == [
        {"serial_number": 0, "amount": 40, "state": "CLAIMED"},
        {"serial_number": 3, "amount": None, "state": "CANCELLED"},
    ]
    history = fetch(url, "select serial_number, amount, state from token_airdrop_history order by serial_number")
    assert history == [
        {"serial_number": 0, "amount": 40, "state": "PENDING"},
        {"serial_number": 3, "amount": None, "state": "PENDING"},
    ]
    where = "sender_account_id = $1 and receiver_account_id = $2 and serial_number = 0"
    assert ranges(url, "token_airdrop", where, encoded(ALICE), encoded(BOB)) == [
        (dropped, claimed),
        (claimed, None),
    ]
    # the claim associated the receiver, then its transfer credited it
    receiver = fetch(url, "select * from token_account where account_id = $1", encoded(BOB))[0]
    assert (receiver["associated"], receiver["automatic_association"], receiver["created_timestamp"]) == (
        True,
        False,
        claimed,
    )
    assert receiver["balance"] == 40
    # the sender was associated already: kept as it was, no new version
    assert ranges(url, "token_account", "account_id = $1", encoded(ALICE)) == [(0, None)]
    assert fetch(url, "select balance from token_account where account_id = $1", encoded(ALICE)) == [
        {"balance": 60}
    ]


def test_stored_schedules_executed_in_one_later_file(url: str) -> None:
    first, second = T0 + SECOND, T0 + 2 * SECOND
    run(url, _create_schedule(first, signatures=[]), _create_schedule(second, signatures=[], number=SCHEDULE + 1))
    executed = [T0 + n * SECOND for n in (3, 4)]
    run(
        url,
        _scheduled_child(executed[0], SCHEDULE + 1),
        item(
            body(
                "cryptoTransfer", module("crypto_transfer_pb2").CryptoTransferTransactionBody(), at=executed[1] - 1
            ),
            at=executed[1] - 1,
        ),
        _scheduled_child(executed[1], SCHEDULE),
    )
    assert fetch(url, "select schedule_id, executed_timestamp from schedule order by schedule_id") == [
        {"schedule_id": encoded(SCHEDULE), "executed_timestamp": executed[1]},
        {"schedule_id": encoded(SCHEDULE + 1), "executed_timestamp": executed[0]},
    ]
