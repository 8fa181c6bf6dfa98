"""Record items of the token, consensus and schedule services built from ``hiero-sdk-python``'s HAPI classes,
imported through ``rows_of_file`` and ``write_batch`` into the test database."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
from collections.abc import Iterable, Sequence
from typing import Any

import asyncpg

from ledgermirror.importer.handlers import Batch, rows_of_file, write_batch
from ledgermirror.importer.record_file import RecordFile, RecordItem, SemanticVersion
from ledgermirror.ledger.entity_id import EntityId

SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
PAYER = 2
NODE = 3
SUCCESS = 22
INVALID_SIGNATURE = 7


def module(name: str) -> Any:
    return importlib.import_module("hiero_sdk_python.hapi.services." + name)


basic = module("basic_types_pb2")
_transaction = module("transaction_pb2")
_record = module("transaction_record_pb2")
_receipt = module("transaction_receipt_pb2")
_timestamp = module("timestamp_pb2")
_contents = module("transaction_contents_pb2")
_duration = module("duration_pb2")


def account(num: int) -> Any:
    return basic.AccountID(shardNum=0, realmNum=0, accountNum=num)


def token(num: int) -> Any:
    return basic.TokenID(shardNum=0, realmNum=0, tokenNum=num)


def topic(num: int) -> Any:
    return basic.TopicID(shardNum=0, realmNum=0, topicNum=num)


def schedule(num: int) -> Any:
    return basic.ScheduleID(shardNum=0, realmNum=0, scheduleNum=num)


def timestamp(nanos: int) -> Any:
    return _timestamp.Timestamp(seconds=nanos // SECOND, nanos=nanos % SECOND)


def duration(seconds: int) -> Any:
    return _duration.Duration(seconds=seconds)


def key(seed: int) -> Any:
    return basic.Key(ed25519=bytes([seed]) * 32)


def key_bytes(seed: int) -> bytes:
    return bytes(key(seed).SerializeToString())


def encoded(num: int) -> int:
    return EntityId(0, 0, num).encoded


def transaction_id(payer: int, valid_start: int) -> Any:
    return basic.TransactionID(accountID=account(payer), transactionValidStart=timestamp(valid_start))


def body(name: str, message: Any, *, payer: int = PAYER, at: int = T0) -> Any:
    """A TransactionBody with ``message`` in its ``name`` field, valid from one second before ``at``."""
    value = _transaction.TransactionBody(
        transactionID=transaction_id(payer, at - SECOND),
        nodeAccountID=account(NODE),
        transactionFee=100_000,
        transactionValidDuration=duration(120),
    )
    getattr(value, name).CopyFrom(message)
    return value


def token_transfers(
    token_num: int,
    amounts: Iterable[tuple[int, int]] = (),
    nfts: Iterable[tuple[int, int, int]] = (),
) -> Any:
    """A TokenTransferList: fungible (account, amount) and NFT (sender, receiver, serial); 0 is no account."""
    return basic.TokenTransferList(
        token=token(token_num),
        transfers=[basic.AccountAmount(accountID=account(num), amount=amount) for num, amount in amounts],
        nftTransfers=[
            basic.NftTransfer(
                senderAccountID=account(sender) if sender else basic.AccountID(),
                receiverAccountID=account(receiver) if receiver else basic.AccountID(),
                serialNumber=serial,
            )
            for sender, receiver, serial in nfts
        ],
    )


def item(
    transaction_body: Any,
    *,
    at: int,
    status: int = SUCCESS,
    receipt: dict[str, Any] | None = None,
    signatures: Sequence[tuple[bytes, bytes]] = ((b"\x01", b"\x02" * 64),),
    **record_fields: Any,
) -> RecordItem:
    """A record item of this body at ``at`` with the given receipt fields and record fields; ``signatures`` are
    (public key prefix, ed25519 signature) pairs of the signature map."""
    signed = _contents.SignedTransaction(
        bodyBytes=transaction_body.SerializeToString(),
        sigMap=basic.SignatureMap(
            sigPair=[basic.SignaturePair(pubKeyPrefix=prefix, ed25519=value) for prefix, value in signatures]
        ),
    ).SerializeToString()
    record = _record.TransactionRecord(
        receipt=_receipt.TransactionReceipt(status=status, **(receipt or {})),
        transactionHash=hashlib.sha384(signed).digest(),
        consensusTimestamp=timestamp(at),
        transactionID=transaction_body.transactionID,
        **record_fields,
    )
    transaction_bytes = _transaction.Transaction(signedTransactionBytes=signed).SerializeToString()
    return RecordItem(at, record.SerializeToString(), transaction_bytes, record)


def record_file(items: Sequence[RecordItem], hapi: tuple[int, int, int]) -> RecordFile:
    stamps = [entry.consensus_timestamp for entry in items]
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


def run(url: str, *items: RecordItem, hapi: tuple[int, int, int] = (0, 60, 0)) -> dict[str, int]:
    """Import one record file of these items (rows_of_file, then write_batch); rows written by table."""
    batch = Batch()
    rows_of_file(record_file(items, hapi), batch)

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


def ranges(url: str, table: str, where: str, *args: Any) -> list[tuple[int, int | None]]:
    """(lower, upper) of every version of a row, history first, by lower bound."""
    rows = fetch(
        url,
        f"select lower(timestamp_range) as lo, upper(timestamp_range) as hi from {table}_history where {where} "
        f"union all select lower(timestamp_range), upper(timestamp_range) from {table} where {where} order by 1",
        *args,
    )
    return [(row["lo"], row["hi"]) for row in rows]
