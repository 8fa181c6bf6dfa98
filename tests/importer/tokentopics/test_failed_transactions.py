"""A failed token, topic or schedule transaction writes its transaction row (with its main entity) and none of
the rows of its service (importer-transaction-handlers.md §1.16); FAIL_INVALID does not change that."""

from __future__ import annotations

from typing import Any

import pytest
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
    module,
    run,
    schedule,
    token,
    topic,
)
from tests.support import Ledger

from ledgermirror.runtime import Prepared

FAIL_INVALID = 1
TOKEN, TOPIC, SCHEDULE, ALICE = 5001, 7001, 7002, 1002
SERVICE_TABLES = (
    "entity",
    "token",
    "token_account",
    "nft",
    "custom_fee",
    "token_airdrop",
    "topic",
    "topic_message",
    "schedule",
    "transaction_signature",
)


def _pending() -> Any:
    return basic.PendingAirdropId(
        sender_id=account(ALICE), receiver_id=account(2), fungible_token_type=token(TOKEN)
    )


CASES: dict[str, tuple[Any, dict[str, Any], dict[str, Any], int | None]] = {
    # body name: (message, receipt, record fields, main entity)
    "tokenCreation": (
        module("token_create_pb2").TokenCreateTransactionBody(name="T", symbol="T", treasury=account(ALICE)),
        {"tokenID": token(TOKEN)},
        {},
        TOKEN,
    ),
    "tokenUpdate": (
        module("token_update_pb2").TokenUpdateTransactionBody(token=token(TOKEN), name="U"),
        {},
        {},
        TOKEN,
    ),
    "tokenMint": (
        module("token_mint_pb2").TokenMintTransactionBody(token=token(TOKEN), metadata=[b"m"]),
        {"serialNumbers": [1], "newTotalSupply": 1},
        {},
        TOKEN,
    ),
    "tokenAssociate": (
        module("token_associate_pb2").TokenAssociateTransactionBody(account=account(ALICE), tokens=[token(TOKEN)]),
        {},
        {},
        ALICE,
    ),
    "tokenFreeze": (
        module("token_freeze_account_pb2").TokenFreezeAccountTransactionBody(
            token=token(TOKEN), account=account(ALICE)
        ),
        {},
        {},
        ALICE,
    ),
    "token_fee_schedule_update": (
        module("token_fee_schedule_update_pb2").TokenFeeScheduleUpdateTransactionBody(token_id=token(TOKEN)),
        {},
        {},
        TOKEN,
    ),
    "tokenAirdrop": (
        module("token_airdrop_pb2").TokenAirdropTransactionBody(),
        {},
        {
            "new_pending_airdrops": [
                module("transaction_record_pb2").PendingAirdropRecord(
                    pending_airdrop_id=_pending(), pending_airdrop_value=basic.PendingAirdropValue(amount=1)
                )
            ]
        },
        None,
    ),
    "tokenClaimAirdrop": (
        module("token_claim_airdrop_pb2").TokenClaimAirdropTransactionBody(pending_airdrops=[_pending()]),
        {},
        {},
        None,
    ),
    "consensusCreateTopic": (
        module("consensus_create_topic_pb2").ConsensusCreateTopicTransactionBody(adminKey=key(1)),
        {"topicID": topic(TOPIC)},
        {},
        TOPIC,
    ),
    "consensusSubmitMessage": (
        module("consensus_submit_message_pb2").ConsensusSubmitMessageTransactionBody(
            topicID=topic(TOPIC), message=b"x"
        ),
        {"topicSequenceNumber": 1, "topicRunningHash": b"\x01" * 48},
        {},
        TOPIC,
    ),
    "scheduleCreate": (
        module("schedule_create_pb2").ScheduleCreateTransactionBody(adminKey=key(1)),
        {"scheduleID": schedule(SCHEDULE)},
        {},
        SCHEDULE,
    ),
    "scheduleSign": (
        module("schedule_sign_pb2").ScheduleSignTransactionBody(scheduleID=schedule(SCHEDULE)),
        {},
        {},
        SCHEDULE,
    ),
}


@pytest.mark.parametrize("status", [INVALID_SIGNATURE, FAIL_INVALID])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_failed_transaction_writes_only_its_transaction(
    database: Prepared, ledger: Ledger, name: str, status: int
) -> None:
    url = database.owner_url
    message, receipt, record_fields, entity = CASES[name]
    at = T0 + SECOND
    run(url, item(body(name, message, at=at), at=at, status=status, receipt=receipt, **record_fields))
    assert fetch(url, "select result, entity_id from transaction") == [
        {"result": status, "entity_id": None if entity is None else encoded(entity)}
    ]
    for table in SERVICE_TABLES:
        assert fetch(url, f"select * from {table}") == [], table
