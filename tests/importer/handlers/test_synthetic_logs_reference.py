"""Synthetic token logs against the reference's own tests: ``SyntheticContractLogServiceImplTest`` (which logs
are created, with whose timestamp, hash, contract and bloom), ``SyntheticLogListenerTest`` and
``SyntheticLogListenerIntegrationTest`` (the end-of-file EVM address and bloom completion). Each case names
the reference test it ports; records are built as the reference's builders build them and go through the
importer's own path (``rows_of_file_with_lookups``, then ``write_batch``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg
import pytest
from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
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
)
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import plan_batch, write_batch
from ledgermirror.importer.handlers.lookups import (
    DatabaseReads,
    complete_held_addresses,
    rows_of_file_with_lookups,
)
from ledgermirror.importer.record_file import RecordItem
from ledgermirror.ledger.evm import keccak256
from ledgermirror.simulator.evm import RlpItem, rlp

OLD, NEW = (0, 70, 0), (0, 71, 0)
"""``SyntheticContractLogServiceImplTest``'s HAPI versions either side of 0.71.0."""
TOKEN, NFT = 5000, 6000
A, B = 1001, 1002
CONTRACT = 2000
HTS_PRECOMPILE = 0x167
HOOK_CONTRACT = 0x16D
TRANSFER = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
EVM_A = bytes.fromhex("d838319b64e38ca2ed8b08c9324ebe4d37facecf")
EVM_B = bytes.fromhex("2818870d1daa81b75e38cec44ceae51b4b684696")
EVM_CONTRACT = bytes.fromhex("abcdef1234567890abcdef1234567890abcdef12")


def run_file(url: str, items: list[RecordItem], hapi: tuple[int, int, int] = OLD, *, lookup: bool = True) -> None:
    """One record file through the importer's path: lookups, rows, the end-of-file address completion, write."""

    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            batch = Batch(synthetic_log_addresses=lookup)
            await rows_of_file_with_lookups(conn, record_file(items, hapi), batch)
            await write_batch(conn, batch)
        finally:
            await conn.close()

    asyncio.run(main())


def logs(url: str) -> list[dict[str, Any]]:
    return fetch(url, "select * from contract_log order by consensus_timestamp, index")


def with_hash(item: RecordItem, first: int) -> RecordItem:
    """The record's transaction hash set to 48 bytes starting with 32 bytes of ``first``."""
    item.record.transactionHash = bytes([first]) * 32 + b"\x00" * 16
    return item


def call_result(contract: int) -> Any:
    return module("contract_types_pb2").ContractFunctionResult(
        contractID=basic.ContractID(contractNum=contract), gasUsed=1
    )


def precompile() -> Any:
    """The call result an HTS precompile child record carries (contract 0x167)."""
    return call_result(HTS_PRECOMPILE)


def fungible(*pairs: tuple[int, int], of: int = TOKEN) -> Any:
    return basic.TokenTransferList(
        token=token(of),
        transfers=[basic.AccountAmount(accountID=account(num), amount=amount) for num, amount in pairs],
    )


def mint(at: int, *, parent: int | None = None, result: Any = None, to: int = A, amount: int = 10) -> RecordItem:
    """A fungible TokenMint crediting ``to`` (a precompile child when it has a ``result``)."""
    message = module("token_mint_pb2").TokenMintTransactionBody(token=token(TOKEN), amount=amount)
    fields: dict[str, Any] = {"contractCallResult": result} if result is not None else {}
    return record_item(
        body("tokenMint", message, valid_start=T0, nonce=1 if parent is not None else 0),
        at=at,
        parent=parent,
        receipt={"newTotalSupply": amount},
        tokenTransferLists=[fungible((to, amount))],
        **fields,
    )


def contract_call(
    at: int, contract: int = CONTRACT, *, parent: int | None = None, result: bool = True
) -> RecordItem:
    call = module("contract_call_pb2").ContractCallTransactionBody(
        contractID=basic.ContractID(contractNum=contract)
    )
    fields: dict[str, Any] = {"contractCallResult": call_result(contract)} if result else {}
    return record_item(
        body("contractCall", call, nonce=1 if parent is not None else 0),
        at=at,
        parent=parent,
        receipt={"contractID": basic.ContractID(contractNum=contract)},
        **fields,
    )


def crypto_transfer(at: int, *lists: Any, parent: int | None = None, result: Any = None) -> RecordItem:
    message = module("crypto_transfer_pb2").CryptoTransferTransactionBody()
    fields: dict[str, Any] = {"contractCallResult": result} if result is not None else {}
    return record_item(
        body("cryptoTransfer", message, nonce=1 if parent is not None else 0),
        at=at,
        parent=parent,
        tokenTransferLists=list(lists),
        **fields,
    )


def num_bytes(num: int) -> bytes:
    """``trim(toEvmAddress(id))`` of 0.0.num."""
    return num.to_bytes(8, "big").lstrip(b"\x00")


def reference_bloom(address: bytes, topics: list[bytes | None]) -> bytes:
    """``LogsBloomFilter``: the address as given, each topic left-padded to 32 bytes (None skipped); for each,
    three bits from the first three byte pairs of its Keccak-256 (byte 255 - bit / 8, bit % 8)."""
    bloom = bytearray(256)
    for value in (address, *(topic.rjust(32, b"\x00") for topic in topics if topic is not None)):
        if not value:
            continue
        digest = keccak256(value)
        for pair in range(3):
            bit = ((digest[2 * pair] << 8) | digest[2 * pair + 1]) & 0x7FF
            bloom[255 - (bit >> 3)] |= 1 << (bit & 7)
    return bytes(bloom)


def evm_entity(ledger: Ledger, num: int, address: bytes, kind: str = "ACCOUNT") -> None:
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, evm_address, created_timestamp, deleted,"
        " timestamp_range) values ($1, $1, 0, 0, $2, $3, 1, false, '[1,)')",
        encoded(num), kind, address,
    )  # fmt: skip


# SyntheticContractLogServiceImplTest -------------------------------------------------------------------------


def test_create_valid_and_indexed(ledger: Ledger) -> None:
    """createValid, createValidIndexed, emptyBloomForNonContractTransactions,
    useChildConsensusTimestampWhenNoParentWithContractResult, useOwnTransactionHashWhenNoContractRelatedParent:
    a HAPI mint gives one Transfer log (synthetic) with the item's own timestamp, index and hash, the token as
    contract and root contract, bloom {0}; an NFT mint one indexed Transfer (not synthetic)."""
    nft_mint = record_item(
        body("tokenMint", module("token_mint_pb2").TokenMintTransactionBody(token=token(NFT), metadata=[b"m"])),
        at=T0 + 1,
        receipt={"newTotalSupply": 1, "serialNumbers": [1]},
        tokenTransferLists=[
            basic.TokenTransferList(
                token=token(NFT), nftTransfers=[basic.NftTransfer(receiverAccountID=account(A), serialNumber=1)]
            )
        ],
    )
    run_file(ledger.url, [with_hash(mint(T0), 0x55), nft_mint])
    rows = logs(ledger.url)
    assert [(r["consensus_timestamp"], r["transaction_index"], r["index"]) for r in rows] == [
        (T0, 0, 0),
        (T0 + 1, 1, 1),
    ]
    assert rows[0]["transaction_hash"] == b"\x55" * 32
    assert [(r["contract_id"], r["root_contract_id"]) for r in rows] == [
        (encoded(TOKEN), encoded(TOKEN)),
        (encoded(NFT), encoded(NFT)),
    ]
    assert [(r["topic1"], r["topic2"], r["topic3"], r["data"]) for r in rows] == [
        (b"", num_bytes(A), None, b"\x0a"),
        (b"", num_bytes(A), b"\x01", b""),
    ]
    assert [(r["synthetic"], r["bloom"]) for r in rows] == [(True, b"\x00"), (False, b"\x00")]


def test_child_of_a_contract_call(ledger: Ledger) -> None:
    """createWhenOldHapiVersionWithParent, useParentConsensusTimestampWhenParentHasContractResult,
    useParentTransactionHashWhenContractRelatedParent (parent hash 32 x 0x3a, child 32 x 0x7b): a precompile
    child of a contract call takes the parent's timestamp, transaction index and hash; its contract is the
    parent's call result contract and its root contract the parent's receipt contract."""
    parent = with_hash(contract_call(T0), 0x3A)
    child = with_hash(mint(T0 + 1, parent=T0, result=precompile()), 0x7B)
    run_file(ledger.url, [parent, child], lookup=False)
    rows = logs(ledger.url)
    assert len(rows) == 1
    row = rows[0]
    assert (row["consensus_timestamp"], row["transaction_index"], row["transaction_hash"]) == (T0, 0, b"\x3a" * 32)
    assert (row["contract_id"], row["root_contract_id"]) == (encoded(CONTRACT), encoded(CONTRACT))
    assert row["payer_account_id"] == encoded(PAYER)
    assert row["bloom"] == b"\x01"  # bloomFilterPopulated: the marker while the lookup is off


def test_new_hapi_version_skips_contract_origin_logs(ledger: Ledger) -> None:
    """skipSyntheticLogForNewHapiVersion, skipSyntheticLogForNewHapiVersionNoParent,
    skipAllSyntheticLogsForNewHapiVersion: from 0.71.0 items with a contract result get none; a HAPI mint in the
    same file still gets its log (HAPI origin: every version)."""
    items = [
        contract_call(T0),
        mint(T0 + 1, parent=T0, result=precompile()),
        mint(T0 + 2, result=precompile()),
        mint(T0 + 3),
    ]
    run_file(ledger.url, items, NEW)
    assert [row["consensus_timestamp"] for row in logs(ledger.url)] == [T0 + 3]


def test_top_level_contract_origin_before_0_71(ledger: Ledger) -> None:
    """createWhenContractParentIsNull, createWithContractWithNoParentLogs: a contract-origin item without a
    contract-related parent (none, or a parent whose call result was cleared) logs under its own timestamp
    and hash, with the token as contract."""
    items = [
        with_hash(mint(T0, result=precompile()), 0x11),
        contract_call(T0 + 1, result=False),
        with_hash(mint(T0 + 2, parent=T0 + 1, result=precompile()), 0x22),
    ]
    run_file(ledger.url, items, lookup=False)
    rows = logs(ledger.url)
    assert [(r["consensus_timestamp"], r["transaction_hash"], r["contract_id"]) for r in rows] == [
        (T0, b"\x11" * 32, encoded(TOKEN)),
        (T0 + 2, b"\x22" * 32, encoded(TOKEN)),
    ]


def test_only_fungible_transfers_for_contract_origin(ledger: Ledger) -> None:
    """doNotCreateForNonTransferContractLogInContractTransaction: an NFT transfer (TransferIndexedContractLog)
    of an item with a contract result gets no log, at any HAPI version; its fungible transfer (OLD) does."""
    nft = basic.TokenTransferList(
        token=token(NFT),
        nftTransfers=[basic.NftTransfer(senderAccountID=account(A), receiverAccountID=account(B), serialNumber=3)],
    )
    items = [
        contract_call(T0),
        crypto_transfer(T0 + 1, nft, fungible((A, -5), (B, 5)), parent=T0, result=precompile()),
    ]
    run_file(ledger.url, items, lookup=False)
    rows = logs(ledger.url)
    assert [(r["topic0"], r["topic1"], r["topic2"], r["topic3"]) for r in rows] == [
        (TRANSFER, num_bytes(A), num_bytes(B), None)
    ]


def test_hook_execution_parent(ledger: Ledger) -> None:
    """createSyntheticLogForOldHapiVersionWithHookRelatedTransaction and
    createAllSyntheticLogsForOldHapiVersionWithThreePrecompileChildren: a CryptoTransfer calls a hook (a child
    call to 0x16d, nonce 1); three HTS children (same top parent) take the hook call's hash. With NEW
    (skipSyntheticLogForNewHapiVersionWithHookRelatedTransaction): none."""

    def items(at: int) -> list[RecordItem]:
        return [
            with_hash(crypto_transfer(at), 0x01),
            with_hash(contract_call(at + 1, HOOK_CONTRACT, parent=at), 0x02),
            *(with_hash(mint(at + 2 + n, parent=at, result=precompile(), amount=n + 1), 0x03) for n in range(3)),
        ]

    run_file(ledger.url, items(T0 - 100), NEW)
    assert logs(ledger.url) == []
    run_file(ledger.url, items(T0), OLD, lookup=False)
    rows = logs(ledger.url)
    assert [(r["consensus_timestamp"], r["transaction_hash"], r["data"]) for r in rows] == [
        (T0 + 1, b"\x02" * 32, b"\x01"),
        (T0 + 1, b"\x02" * 32, b"\x02"),
        (T0 + 1, b"\x02" * 32, b"\x03"),
    ]
    assert {(r["contract_id"], r["root_contract_id"]) for r in rows} == {(encoded(HOOK_CONTRACT),) * 2}


def test_two_hook_calls_keep_their_own_hash(ledger: Ledger) -> None:
    """createSyntheticLogForOldHapiVersionWithMultipleCallChildRecords: two hook calls (both 0x16d) under a
    CryptoTransfer, each moving tokens: their own result names 365, which stops the hook-parent search, and the
    top parent has no result, so each log carries its own item's hash."""
    hook_calls = []
    for n, first in ((1, 0x0A), (2, 0x0B)):
        call = contract_call(T0 + n, HOOK_CONTRACT, parent=T0)
        call.record.tokenTransferLists.append(fungible((A, -n), (B, n)))
        hook_calls.append(with_hash(call, first))
    run_file(ledger.url, [crypto_transfer(T0), *hook_calls], lookup=False)
    rows = logs(ledger.url)
    assert [(r["consensus_timestamp"], r["transaction_hash"]) for r in rows] == [
        (T0 + 1, b"\x0a" * 32),
        (T0 + 2, b"\x0b" * 32),
    ]


def test_identical_logs_are_not_deduplicated(ledger: Ledger) -> None:
    """createAllIdenticalSyntheticLogsForOldHapiVersion / createAllDifferentSyntheticLogsForOldHapiVersion: the
    same transfer twice in one item gives two logs, with consecutive indexes of the parent."""
    child = mint(T0 + 1, parent=T0, result=precompile())
    child.record.tokenTransferLists.append(fungible((A, 10)))
    run_file(ledger.url, [contract_call(T0), child], lookup=False)
    rows = logs(ledger.url)
    assert [(r["index"], r["topic2"], r["data"]) for r in rows] == [
        (0, num_bytes(A), b"\x0a"),
        (1, num_bytes(A), b"\x0a"),
    ]


def _eip1559(data: bytes) -> bytes:
    fields: list[RlpItem] = [298, 1, 5, 9, 400_000, b"\x11" * 20, 0, data, [], 1]
    return bytes((2,)) + rlp([*fields, b"\x0a" * 32, b"\x0b" * 32])


def test_ethereum_parent_hash(ledger: Ledger) -> None:
    """useEthereumTransactionHashForSyntheticLogWithContractCallAndCryptoTransferChildren: an Ethereum parent
    (HAPI 0.69.0, hash 32 x 0xAB) -> an HTS call child -> a CryptoTransfer child of the Ethereum transaction
    (its previous item the call child): one log, under the Ethereum transaction's hash."""
    ethereum = module("ethereum_transaction_pb2").EthereumTransactionBody(ethereum_data=_eip1559(b"\xca"))
    parent = record_item(
        body("ethereumTransaction", ethereum),
        at=T0,
        contractCallResult=call_result(CONTRACT),
        ethereum_hash=b"\xab" * 32,
    )
    items = [
        parent,
        contract_call(T0 + 1, HTS_PRECOMPILE, parent=T0),
        crypto_transfer(T0 + 2, fungible((A, -4), (B, 4)), parent=T0),
    ]
    run_file(ledger.url, items, (0, 69, 0), lookup=False)
    rows = logs(ledger.url)
    assert [(r["consensus_timestamp"], r["transaction_hash"], r["synthetic"]) for r in rows] == [
        (T0, b"\xab" * 32, True)
    ]


# SyntheticLogListenerTest, SyntheticLogListenerIntegrationTest -------------------------------------------------


def test_topics_take_evm_addresses(ledger: Ledger) -> None:
    """cachesDbResults: both parties have EVM addresses in the database: topic1/topic2 become them (trimmed),
    in this file and the next. cachesWithSomeDbResults: only one has: the other keeps its long-zero bytes.
    nullSenderAndOrReceiver: a mint's empty sender stays empty."""
    evm_entity(ledger, A, EVM_A)
    evm_entity(ledger, B, EVM_B)
    evm_entity(ledger, 1003, b"\x00" * 12 + b"\x00\x00\x00\x00\x00\x00\x0f\xff")  # a long-zero address of its own
    run_file(ledger.url, [crypto_transfer(T0, fungible((A, -5), (B, 5)))])
    run_file(ledger.url, [crypto_transfer(T0 + 1, fungible((A, -5), (B, 5)))])
    run_file(ledger.url, [crypto_transfer(T0 + 2, fungible((A, -5), (1004, 5))), mint(T0 + 3, to=1003)])
    rows = logs(ledger.url)
    assert [(r["topic1"], r["topic2"]) for r in rows] == [
        (EVM_A, EVM_B),
        (EVM_A, EVM_B),
        (EVM_A, num_bytes(1004)),
        (b"", b"\x0f\xff"),  # stored addresses are trimmed of leading zeros
    ]
    assert all(r["bloom"] == b"\x00" for r in rows)  # bloomNotUpdatedWhenNotMarker


def test_only_synthetic_transfers_are_rewritten(ledger: Ledger) -> None:
    """queryAndUpdateOnlySyntheticTransferLogs: the NFT Transfer and the Approval logs (not synthetic) keep the
    long-zero topics; cachesNoDbResults: without stored addresses nothing changes."""
    evm_entity(ledger, A, EVM_A)
    nft = basic.TokenTransferList(
        token=token(NFT),
        nftTransfers=[basic.NftTransfer(senderAccountID=account(A), receiverAccountID=account(B), serialNumber=3)],
    )
    run_file(ledger.url, [crypto_transfer(T0, nft, fungible((A, -5), (B, 5)))])
    rows = logs(ledger.url)
    assert [(r["synthetic"], r["topic1"], r["topic2"]) for r in rows] == [
        (False, num_bytes(A), num_bytes(B)),
        (True, EVM_A, num_bytes(B)),
    ]


def test_address_of_an_entity_created_in_the_same_file(ledger: Ledger) -> None:
    """addsNewEntityToCache / bloomUsesContractEvmAddressFromParserContext: an entity created earlier in the
    same file (not yet in the database) gives its EVM address: a contract created with one, then called, whose
    precompile child moves tokens to it: topic2 and the bloom's address are its EVM address."""
    create = module("contract_create_pb2").ContractCreateTransactionBody(initcode=b"\x60", gas=5)
    created = record_item(
        body("contractCreateInstance", create),
        at=T0,
        receipt={"contractID": basic.ContractID(contractNum=CONTRACT)},
        contractCreateResult=module("contract_types_pb2").ContractFunctionResult(
            contractID=basic.ContractID(contractNum=CONTRACT),
            evm_address=wrappers_pb2.BytesValue(value=EVM_CONTRACT),
        ),
    )
    child = crypto_transfer(T0 + 2, fungible((A, -3), (CONTRACT, 3)), parent=T0 + 1, result=precompile())
    run_file(ledger.url, [created, contract_call(T0 + 1), child])
    rows = logs(ledger.url)
    assert [(r["topic1"], r["topic2"]) for r in rows] == [(num_bytes(A), EVM_CONTRACT)]
    assert rows[0]["bloom"] == reference_bloom(EVM_CONTRACT, [TRANSFER, num_bytes(A), EVM_CONTRACT, None])


def test_bloom_from_the_contract_address(ledger: Ledger) -> None:
    """bloomUsesContractEvmAddressFromCache and SyntheticLogListenerIntegrationTest
    .childContractExecutionWithAliasTopicsUsesParentTransactionHash: a precompile child's Transfer log (bloom
    marker {1}) under a call of a contract with a stored EVM address: topics become the parties' aliases, the
    bloom is computed after that from trim(contract EVM), topic0 and the rewritten topics (256 bytes), and the
    hash stays the parent's. bloomUsesLongZeroAddressWhenNoEvmAddress: a contract without one gives the bloom
    of its 20-byte long-zero address."""
    evm_entity(ledger, A, EVM_A)
    evm_entity(ledger, B, EVM_B)
    evm_entity(ledger, CONTRACT, EVM_CONTRACT, "CONTRACT")
    parent = with_hash(contract_call(T0), 0x12)
    child = crypto_transfer(T0 + 1, fungible((A, -7), (B, 7)), parent=T0, result=precompile())
    other = contract_call(T0 + 2, 2001)
    other_child = crypto_transfer(T0 + 3, fungible((A, -1), (B, 1)), parent=T0 + 2, result=precompile())
    run_file(ledger.url, [parent, child, other, other_child])
    rows = logs(ledger.url)
    assert [(r["topic1"], r["topic2"], r["transaction_hash"]) for r in rows[:1]] == [(EVM_A, EVM_B, b"\x12" * 32)]
    assert len(rows[0]["bloom"]) == 256
    assert rows[0]["bloom"] == reference_bloom(EVM_CONTRACT, [TRANSFER, EVM_A, EVM_B, None])
    long_zero = (2001).to_bytes(20, "big")
    assert rows[1]["bloom"] == reference_bloom(long_zero, [TRANSFER, EVM_A, EVM_B, None])


def test_lookup_off_keeps_marker_and_long_zero_topics(ledger: Ledger) -> None:
    """``persist.syntheticContractLogEvmAddressLookup`` false: the marker bloom {1} is stored and the topics
    stay the ids' long-zero bytes."""
    evm_entity(ledger, A, EVM_A)
    items = [
        contract_call(T0),
        crypto_transfer(T0 + 1, fungible((A, -7), (B, 7)), parent=T0, result=precompile()),
    ]
    run_file(ledger.url, items, lookup=False)
    assert [(r["topic1"], r["topic2"], r["bloom"]) for r in logs(ledger.url)] == [
        (num_bytes(A), num_bytes(B), b"\x01")
    ]


class CountedReads(DatabaseReads):
    """The database's reads, counted."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        super().__init__(conn)
        self.address_reads = 0

    async def evm_addresses(self, entity_ids: Sequence[int]) -> dict[int, bytes]:
        self.address_reads += 1
        return await super().evm_addresses(entity_ids)


def test_files_held_to_the_end_of_the_gathering_read_their_addresses_once(ledger: Ledger) -> None:
    """The importer holds each file's completion to the end of its gathering (``Batch.hold_addresses``) and
    reads the addresses of all its files at once; each file's logs are still completed as at its own end
    (``SyntheticLogListener.onEnd``, per record file): a contract that a later file of the batch creates with an
    EVM address does not give it to an earlier file's log, and does to its own file's log. The batch is not
    planned while a file waits."""
    evm_entity(ledger, A, EVM_A)
    create = module("contract_create_pb2").ContractCreateTransactionBody(initcode=b"\x60", gas=5)
    created = record_item(
        body("contractCreateInstance", create),
        at=T0 + 10,
        receipt={"contractID": basic.ContractID(contractNum=CONTRACT)},
        contractCreateResult=module("contract_types_pb2").ContractFunctionResult(
            contractID=basic.ContractID(contractNum=CONTRACT),
            evm_address=wrappers_pb2.BytesValue(value=EVM_CONTRACT),
        ),
    )
    files = [
        [crypto_transfer(T0, fungible((A, -5), (CONTRACT, 5)))],
        [created, crypto_transfer(T0 + 11, fungible((A, -3), (CONTRACT, 3)))],
        [crypto_transfer(T0 + 20, fungible((A, -1), (B, 1)))],
    ]

    async def main() -> int:
        conn = await asyncpg.connect(ledger.url)
        try:
            reads = CountedReads(conn)
            batch = Batch(hold_addresses=True)
            for items in files:
                await rows_of_file_with_lookups(reads, record_file(items), batch)
            assert (len(batch.held_addresses), reads.address_reads) == (3, 0)
            with pytest.raises(RuntimeError, match="wait for their addresses"):
                plan_batch(batch)
            await complete_held_addresses(reads, batch)
            await write_batch(conn, batch)
            return reads.address_reads
        finally:
            await conn.close()

    assert asyncio.run(main()) == 1
    rows = logs(ledger.url)
    assert [(r["topic1"], r["topic2"]) for r in rows] == [
        (EVM_A, num_bytes(CONTRACT)),
        (EVM_A, EVM_CONTRACT),
        (EVM_A, num_bytes(B)),
    ]
