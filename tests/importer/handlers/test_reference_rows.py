"""Smaller rows as the reference writes them, each checked against the reference's handler code or test named
in the case (the records go through the importer's own path: ``rows_of_file_with_lookups``, then
``write_batch``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
from tests.importer.handlers.items import (
    PAYER,
    SECOND,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    module,
    record_file,
    record_item,
    token,
    transaction_pb2,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import write_batch
from ledgermirror.importer.handlers.lookups import rows_of_file_with_lookups
from ledgermirror.importer.record_file import RecordItem
from ledgermirror.simulator.evm import RlpItem, rlp

DAY = 86_400 * SECOND
ALICE, BOB = 1001, 1002
TOKEN = 5000
CALL_DATA = b"\xca\xfe"


def run_file(url: str, items: list[RecordItem]) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            batch = Batch()
            await rows_of_file_with_lookups(conn, record_file(items), batch)
            await write_batch(conn, batch)
        finally:
            await conn.close()

    asyncio.run(main())


def ethereum_data() -> bytes:
    fields: list[RlpItem] = [298, 1, 5, 9, 400_000, b"\x11" * 20, 0, CALL_DATA, [], 1]
    return bytes((2,)) + rlp([*fields, b"\x0a" * 32, b"\x0b" * 32])


def ethereum(at: int, *, status: int = 22, **record_fields: Any) -> RecordItem:
    message = module("ethereum_transaction_pb2").EthereumTransactionBody(ethereum_data=ethereum_data())
    return record_item(body("ethereumTransaction", message, valid_start=at), at=at, status=status, **record_fields)


def accounts(ledger: Ledger, *nums: int) -> None:
    for num in nums:
        ledger.execute(
            "insert into entity (id, num, realm, shard, type, created_timestamp, deleted, timestamp_range)"
            " values ($1, $1, 0, 0, 'ACCOUNT', 1, false, '[1,)')",
            encoded(num),
        )


def test_ethereum_transaction_has_a_second_hash_row(ledger: Ledger) -> None:
    """``SqlEntityListener.onEthereumTransaction``: besides the record hash (its first 32 bytes, then the
    other 16), an Ethereum transaction's 32-byte hash is a ``transaction_hash`` row of its own (no suffix)."""
    item = ethereum(
        T0,
        ethereum_hash=b"\xee" * 32,
        contractCallResult=module("contract_types_pb2").ContractFunctionResult(gasUsed=1),
    )
    run_file(ledger.url, [item])
    rows = fetch(ledger.url, "select * from transaction_hash order by hash_suffix nulls first")
    digest = bytes(item.record.transactionHash)
    assert [(r["consensus_timestamp"], r["hash"], r["hash_suffix"], r["payer_account_id"]) for r in rows] == [
        (T0, b"\xee" * 32, None, encoded(PAYER)),
        (T0, digest[:32], digest[32:], encoded(PAYER)),
    ]


def test_failed_ethereum_transaction_default_result(ledger: Ledger) -> None:
    """``ContractResultServiceImplIntegrationTest.processFailedEthereumTransactionWithoutContractResult``: a
    failed Ethereum transaction without a function result gets a result with ``call_result`` empty bytes,
    contract 0, gas used 0, the call data as parameters, the payer as sender and the Ethereum hash."""
    run_file(ledger.url, [ethereum(T0, status=492)])  # CONSENSUS_GAS_EXHAUSTED
    row = fetch(ledger.url, "select * from contract_result")[0]
    keccak = fetch(ledger.url, "select hash from ethereum_transaction")[0]["hash"]
    assert {
        name: row[name]
        for name in (
            "call_result",
            "contract_id",
            "function_parameters",
            "gas_limit",
            "gas_used",
            "payer_account_id",
            "sender_id",
            "transaction_hash",
            "transaction_result",
        )
    } == {
        "call_result": b"",
        "contract_id": 0,
        "function_parameters": CALL_DATA,
        "gas_limit": 400_000,
        "gas_used": 0,
        "payer_account_id": encoded(PAYER),
        "sender_id": encoded(PAYER),
        "transaction_hash": keccak,
        "transaction_result": 492,
    }


def test_contract_transaction_keeps_the_empty_contract(ledger: Ledger) -> None:
    """``RecordItem.addContractTransaction`` (its predicate accepts every id): a call whose contract does not
    resolve (an unknown EVM address) is linked to 0.0.0 as well as to its payer."""
    call = module("contract_call_pb2").ContractCallTransactionBody(
        contractID=basic.ContractID(evm_address=b"\x77" * 20), gas=7
    )
    run_file(ledger.url, [record_item(body("contractCall", call), at=T0, status=15)])  # INVALID_CONTRACT_ID
    rows = fetch(ledger.url, "select entity_id, contract_ids from contract_transaction order by entity_id")
    assert rows == [
        {"entity_id": 0, "contract_ids": [0, encoded(PAYER)]},
        {"entity_id": encoded(PAYER), "contract_ids": [0, encoded(PAYER)]},
    ]


def test_topic_without_fees_has_an_empty_fee_list(ledger: Ledger) -> None:
    """``ConsensusCreateTopicTransactionHandlerTest`` (``fixedFees(Collections.emptyList())``): a topic created
    without custom fees gets a ``custom_fee`` row with ``fixed_fees = []``."""
    create = module("consensus_create_topic_pb2").ConsensusCreateTopicTransactionBody(memo="t")
    topic = basic.TopicID(topicNum=3000)
    run_file(ledger.url, [record_item(body("consensusCreateTopic", create), at=T0, receipt={"topicID": topic})])
    rows = fetch(ledger.url, "select entity_id, fixed_fees, fractional_fees, royalty_fees from custom_fee")
    listed = [(r["entity_id"], json.loads(r["fixed_fees"]), r["fractional_fees"], r["royalty_fees"]) for r in rows]
    assert listed == [(encoded(3000), [], None, None)]


def test_inner_transactions_null_unless_set(ledger: Ledger) -> None:
    """``Transaction.addInnerTransaction``: ``inner_transactions`` starts NULL and is a list only once an inner
    transaction is added: an atomic batch whose inner records are not in the file keeps NULL."""
    batch_body = body("atomic_batch", transaction_pb2.AtomicBatchTransactionBody())
    run_file(ledger.url, [record_item(batch_body, at=T0)])
    assert fetch(ledger.url, "select type, inner_transactions from transaction") == [
        {"type": 74, "inner_transactions": None}
    ]


def test_stake_period_start_moves_only_forward(ledger: Ledger) -> None:
    """``SqlEntityListener.onStakingRewardTransfer`` (``SqlEntityListenerTest.onStakingRewardTransfer`` and
    ``...FromStakingUpdate``): the reward sets ``stake_period_start`` to the day before unless the batch holds
    a start that is not earlier: a second reward the same day writes no new version, and a staking update the
    same day (start = today) is not moved back."""
    accounts(ledger, ALICE, BOB)
    day = (T0 // DAY + 1) * DAY
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody

    def rewarded(at: int, num: int) -> RecordItem:
        return record_item(
            body("cryptoTransfer", transfer(), valid_start=at),
            at=at,
            paid_staking_rewards=[basic.AccountAmount(accountID=account(num), amount=5)],
        )

    update = module("crypto_update_pb2").CryptoUpdateTransactionBody(
        accountIDToUpdate=account(BOB), staked_node_id=1
    )
    staked_update = record_item(
        body("cryptoUpdateAccount", update, valid_start=day + 3 * SECOND),
        at=day + 3 * SECOND,
        paid_staking_rewards=[basic.AccountAmount(accountID=account(BOB), amount=5)],
    )
    run_file(ledger.url, [rewarded(day + SECOND, ALICE), rewarded(day + 2 * SECOND, ALICE), staked_update])
    rows = fetch(
        ledger.url, "select id, stake_period_start, lower(timestamp_range) as since from entity order by id"
    )
    today = day // DAY
    assert rows == [
        {"id": encoded(ALICE), "stake_period_start": today - 1, "since": day + SECOND},
        {"id": encoded(BOB), "stake_period_start": today, "since": day + 3 * SECOND},
    ]


def test_settling_an_airdrop_with_an_unknown_party_is_skipped(ledger: Ledger) -> None:
    """``AbstractTokenUpdateAirdropTransactionHandler``: a claim or cancel whose sender or receiver does not
    resolve (an unknown alias) is skipped ("Invalid update token airdrop entity id"), the others are applied."""
    accounts(ledger, ALICE, BOB)
    unknown = basic.AccountID(alias=basic.Key(ed25519=b"\x09" * 32).SerializeToString())

    def pending(receiver: Any) -> Any:
        return basic.PendingAirdropId(
            sender_id=account(ALICE), receiver_id=receiver, fungible_token_type=token(TOKEN)
        )

    airdrop = module("token_airdrop_pb2").TokenAirdropTransactionBody()
    record_airdrop = module("transaction_record_pb2").PendingAirdropRecord
    dropped = record_item(
        body("tokenAirdrop", airdrop, payer=ALICE),
        at=T0,
        new_pending_airdrops=[
            record_airdrop(
                pending_airdrop_id=pending(account(BOB)), pending_airdrop_value=basic.PendingAirdropValue(amount=4)
            )
        ],
    )
    cancel = module("token_cancel_airdrop_pb2").TokenCancelAirdropTransactionBody(
        pending_airdrops=[pending(unknown), pending(account(BOB))]
    )
    run_file(ledger.url, [dropped, record_item(body("tokenCancelAirdrop", cancel, payer=ALICE), at=T0 + 1)])
    rows = fetch(ledger.url, "select sender_account_id, receiver_account_id, state from token_airdrop")
    assert rows == [
        {"sender_account_id": encoded(ALICE), "receiver_account_id": encoded(BOB), "state": "CANCELLED"}
    ]
