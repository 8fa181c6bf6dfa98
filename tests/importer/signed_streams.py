"""Signed v6 streams with real transactions, written by the tests (own node keys, ``stream_writer``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from hiero_sdk_python.hapi.services import (  # type: ignore[import-untyped]
    basic_types_pb2,
    timestamp_pb2,
    transaction_contents_pb2,
    transaction_pb2,
    transaction_record_pb2,
)
from tests.importer import stream_writer

from ledgermirror.importer.pipeline import stream_name_prefix

SUCCESS = 22
GENESIS_HASH = bytes(48)


def node_keys(count: int) -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(count)]


def stamp(nanos: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=nanos // 1_000_000_000, nanos=nanos % 1_000_000_000)


def file_update(nanos: int, file_num: int, contents: bytes) -> stream_writer.Item:
    """A successful FileUpdate of 0.0.``file_num`` paid by 0.0.2, with its record."""
    transaction_id = basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(accountNum=2), transactionValidStart=stamp(nanos - 1_000_000_000)
    )
    body = transaction_pb2.TransactionBody(
        transactionID=transaction_id,
        nodeAccountID=basic_types_pb2.AccountID(accountNum=3),
        transactionFee=100,
    )
    body.fileUpdate.fileID.fileNum = file_num
    body.fileUpdate.contents = contents
    signed = transaction_contents_pb2.SignedTransaction(bodyBytes=body.SerializeToString())
    transaction = transaction_pb2.Transaction(signedTransactionBytes=signed.SerializeToString())
    record = transaction_record_pb2.TransactionRecord(
        consensusTimestamp=stamp(nanos), transactionID=transaction_id
    )
    record.receipt.status = SUCCESS
    return stream_writer.Item(record.SerializeToString(), transaction.SerializeToString())


def write_file(
    root: Path,
    nanos: int,
    items: Sequence[stream_writer.Item],
    start: bytes,
    block: int,
    *,
    keys: Sequence[rsa.RSAPrivateKey],
) -> bytes:
    written = stream_writer.v6(items, start, block)
    stem = stream_name_prefix(nanos)
    for node_id, key in enumerate(keys):
        folder = root / "recordstreams" / f"record0.0.{node_id + 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.rcd.gz").write_bytes(written.stored)
        signature = stream_writer.signature_v6(key, written.file_hash, written.metadata_hash or b"")
        (folder / f"{stem}.rcd_sig").write_bytes(signature)
    return written.end_hash
