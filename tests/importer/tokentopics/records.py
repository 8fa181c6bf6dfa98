"""Record items of the token, consensus and schedule services built from ``hiero-sdk-python``'s HAPI classes
(the shared primitives are `tests/importer/handlers/items.py`), imported through ``rows_of_file`` and
``write_batch`` into the test database."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from tests.importer.handlers.items import (
    NODE,
    PAYER,
    SECOND,
    T0,
    account,
    basic,
    encoded,
    fetch,
    import_items,
    module,
    record_file,
    timestamp,
    token,
)

from ledgermirror.importer.record_file import RecordItem

__all__ = [
    "PAYER",
    "SECOND",
    "T0",
    "account",
    "basic",
    "encoded",
    "fetch",
    "module",
    "record_file",
    "token",
]

SUCCESS = 22
INVALID_SIGNATURE = 7

_transaction = module("transaction_pb2")
_record = module("transaction_record_pb2")
_receipt = module("transaction_receipt_pb2")
_contents = module("transaction_contents_pb2")
_duration = module("duration_pb2")


def topic(num: int) -> Any:
    return basic.TopicID(shardNum=0, realmNum=0, topicNum=num)


def schedule(num: int) -> Any:
    return basic.ScheduleID(shardNum=0, realmNum=0, scheduleNum=num)


def duration(seconds: int) -> Any:
    return _duration.Duration(seconds=seconds)


def key(seed: int) -> Any:
    return basic.Key(ed25519=bytes([seed]) * 32)


def key_bytes(seed: int) -> bytes:
    return bytes(key(seed).SerializeToString())


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


def run(url: str, *items: RecordItem) -> dict[str, int]:
    """Import one record file of these items (rows_of_file, then write_batch); rows written by table."""
    return import_items(url, *items)


def ranges(url: str, table: str, where: str, *args: Any) -> list[tuple[int, int | None]]:
    """(lower, upper) of every version of a row, history first, by lower bound."""
    rows = fetch(
        url,
        f"select lower(timestamp_range) as lo, upper(timestamp_range) as hi from {table}_history where {where} "
        f"union all select lower(timestamp_range), upper(timestamp_range) from {table} where {where} order by 1",
        *args,
    )
    return [(row["lo"], row["hi"]) for row in rows]
