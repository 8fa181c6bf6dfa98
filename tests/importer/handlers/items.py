"""Record items built from HAPI protobuf messages (``hiero-sdk-python``), and a run of them into the database."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import asyncpg

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import write_batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.record_file import RecordFile, RecordItem, SemanticVersion
from ledgermirror.ledger.entity_id import EntityId

_SERVICES = "hiero_sdk_python.hapi.services."
SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND  # 2023-11-14
PAYER = 2
NODE = 3


def module(name: str) -> Any:
    import importlib

    return importlib.import_module(_SERVICES + name)


basic = module("basic_types_pb2")
transaction_pb2 = module("transaction_pb2")
record_pb2 = module("transaction_record_pb2")
receipt_pb2 = module("transaction_receipt_pb2")
timestamp_pb2 = module("timestamp_pb2")
contents_pb2 = module("transaction_contents_pb2")


def account(num: int) -> Any:
    return basic.AccountID(shardNum=0, realmNum=0, accountNum=num)


def token(num: int) -> Any:
    return basic.TokenID(shardNum=0, realmNum=0, tokenNum=num)


def file(num: int) -> Any:
    return basic.FileID(shardNum=0, realmNum=0, fileNum=num)


def timestamp(nanos: int) -> Any:
    return timestamp_pb2.Timestamp(seconds=nanos // SECOND, nanos=nanos % SECOND)


def ed25519(seed: int) -> Any:
    return basic.Key(ed25519=bytes([seed]) * 32)


def encoded(num: int) -> int:
    return EntityId(0, 0, num).encoded


def transfer_list(transfers: Iterable[tuple[int, int]], approvals: Iterable[int] = ()) -> Any:
    approved = set(approvals)
    return basic.TransferList(
        accountAmounts=[
            basic.AccountAmount(accountID=account(num), amount=amount, is_approval=num in approved)
            for num, amount in transfers
        ]
    )


def body(
    name: str,
    message: Any,
    *,
    payer: int = PAYER,
    valid_start: int = T0,
    nonce: int = 0,
    memo: str = "",
    fee: int = 100_000,
) -> Any:
    value = transaction_pb2.TransactionBody(
        transactionID=basic.TransactionID(
            accountID=account(payer), transactionValidStart=timestamp(valid_start), nonce=nonce
        ),
        nodeAccountID=account(NODE),
        transactionFee=fee,
        transactionValidDuration=module("duration_pb2").Duration(seconds=120),
        memo=memo,
    )
    getattr(value, name).CopyFrom(message)
    return value


def record_item(
    transaction_body: Any,
    *,
    at: int,
    status: int = 22,
    transfers: Sequence[tuple[int, int]] = (),
    charged: int = 0,
    parent: int | None = None,
    receipt: dict[str, Any] | None = None,
    **record_fields: Any,
) -> RecordItem:
    signed = contents_pb2.SignedTransaction(
        bodyBytes=transaction_body.SerializeToString(),
        sigMap=basic.SignatureMap(sigPair=[basic.SignaturePair(pubKeyPrefix=b"\x01", ed25519=b"\x02" * 64)]),
    ).SerializeToString()
    transaction_bytes = transaction_pb2.Transaction(signedTransactionBytes=signed).SerializeToString()
    record = record_pb2.TransactionRecord(
        receipt=receipt_pb2.TransactionReceipt(status=status, **(receipt or {})),
        transactionHash=hashlib.sha384(signed).digest(),
        consensusTimestamp=timestamp(at),
        transactionID=transaction_body.transactionID,
        transactionFee=charged,
        transferList=transfer_list(transfers),
        **record_fields,
    )
    if parent is not None:
        record.parent_consensus_timestamp.CopyFrom(timestamp(parent))
    return RecordItem(at, record.SerializeToString(), transaction_bytes, record)


def record_file(items: Sequence[RecordItem], hapi: tuple[int, int, int] = (0, 60, 0)) -> RecordFile:
    stamps = [item.consensus_timestamp for item in items]
    return RecordFile(
        name="2023-11-14T22_13_20Z.rcd.gz",
        version=6,
        hapi_version=SemanticVersion(*hapi),
        previous_hash=b"\x00" * 48,
        hash=b"\x00" * 48,
        file_hash=b"\x00" * 48,
        metadata_hash=None,
        block_number=1,
        items=tuple(items),
        sidecars=(),
        size=0,
        consensus_start=min(stamps, default=T0),
        consensus_end=max(stamps, default=T0),
    )


def import_items(url: str, *items: RecordItem, batch: Batch | None = None) -> dict[str, int]:
    """rows_of_file + write_batch of one file made of the items."""
    batch = batch or Batch()
    rows_of_file(record_file(items), batch)
    return write(url, batch)


def write(url: str, batch: Batch) -> dict[str, int]:
    async def main() -> dict[str, int]:
        conn = await asyncpg.connect(url)
        try:
            return await write_batch(conn, batch)
        finally:
            await conn.close()

    return asyncio.run(main())


def fetch(url: str, sql: str, *args: Any) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(url)
        try:
            return [dict(row) for row in await conn.fetch(sql, *args)]
        finally:
            await conn.close()

    return asyncio.run(main())


def create_account(num: int, *, at: int, initial: int = 0, payer: int = PAYER, key_seed: int = 7) -> RecordItem:
    """A successful CryptoCreate of 0.0.num funded with ``initial`` by the payer."""
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(
        key=ed25519(key_seed), initialBalance=initial, memo="new", max_automatic_token_associations=2
    )
    transfers = [(payer, -initial), (num, initial)] if initial else []
    return record_item(
        body("cryptoCreateAccount", create, payer=payer, valid_start=at - SECOND),
        at=at,
        transfers=transfers,
        receipt={"accountID": account(num)},
    )


def crypto_transfer(
    transfers: Sequence[tuple[int, int]],
    *,
    at: int,
    status: int = 22,
    payer: int = PAYER,
    approvals: Iterable[int] = (),
    fee: int = 0,
    **record_fields: Any,
) -> RecordItem:
    message = module("crypto_transfer_pb2").CryptoTransferTransactionBody(
        transfers=transfer_list(transfers, approvals)
    )
    record_transfers = list(transfers) if status == 22 else []
    if fee:
        record_transfers += [(payer, -fee), (98, fee)]
    return record_item(
        body("cryptoTransfer", message, payer=payer, valid_start=at - SECOND),
        at=at,
        status=status,
        transfers=record_transfers,
        charged=fee,
        **record_fields,
    )
