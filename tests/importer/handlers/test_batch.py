"""Batch-level behaviour that needs no database: signature rows, entity_transaction, atomic batches."""

from __future__ import annotations

from tests.importer.handlers.items import (
    PAYER,
    T0,
    basic,
    body,
    contents_pb2,
    crypto_transfer,
    encoded,
    module,
    record_file,
    record_item,
    transaction_pb2,
)

from ledgermirror.importer.handlers import Batch, item_of, rows_of_file
from ledgermirror.importer.handlers.common import signature_rows
from ledgermirror.importer.record_file import RecordItem


def rows(batch: Batch, table: str) -> list[dict[str, object]]:
    return [row for segment in batch.segments for row in segment.inserts.get(table, [])]


def test_signature_rows_first_per_prefix() -> None:
    item = item_of(crypto_transfer([], at=T0), 0)
    pairs = [
        basic.SignaturePair(pubKeyPrefix=b"\x01", ed25519=b"\x02" * 64),
        basic.SignaturePair(pubKeyPrefix=b"\x01", ed25519=b"\x03" * 64),
        basic.SignaturePair(pubKeyPrefix=b"\x04", ECDSA_secp256k1=b"\x05" * 64),
    ]
    signed = contents_pb2.SignedTransaction(
        bodyBytes=item.body.SerializeToString(), sigMap=basic.SignatureMap(sigPair=pairs)
    ).SerializeToString()
    transaction = transaction_pb2.Transaction(signedTransactionBytes=signed).SerializeToString()
    record_item_ = RecordItem(T0, item.record.SerializeToString(), transaction, item.record)
    batch = Batch()
    signature_rows(item_of(record_item_, 0), batch, 777)
    assert rows(batch, "transaction_signature") == [
        {"consensus_timestamp": T0, "entity_id": 777, "public_key_prefix": b"\x01", "signature": b"\x02" * 64,
         "type": 3},
        {"consensus_timestamp": T0, "entity_id": 777, "public_key_prefix": b"\x04", "signature": b"\x05" * 64,
         "type": 6},
    ]  # fmt: skip
    failed = item_of(crypto_transfer([], at=T0, status=7), 0)
    signature_rows(failed, batch := Batch(), 777)
    assert rows(batch, "transaction_signature") == []


def test_entity_transaction_rows_when_kept() -> None:
    item = crypto_transfer([(PAYER, -5), (1001, 5)], at=T0, fee=3)
    kept = Batch(entity_transactions=True)
    rows_of_file(record_file([item]), kept)
    assert [row["entity_id"] for row in rows(kept, "entity_transaction")] == [
        PAYER,
        3,
        encoded(1001),
    ]  # not 0.0.98
    assert {(row["type"], row["result"], row["payer_account_id"]) for row in rows(kept, "entity_transaction")} == {
        (14, 22, PAYER)
    }
    default = Batch()
    rows_of_file(record_file([item]), default)
    assert rows(default, "entity_transaction") == []


def test_atomic_batch_lists_its_inner_transactions() -> None:
    batch_key = basic.Key(ed25519=b"\x09" * 32)
    outer = record_item(body("atomic_batch", transaction_pb2.AtomicBatchTransactionBody()), at=T0)
    inner_body = body(
        "util_prng", module("util_prng_pb2").UtilPrngTransactionBody(), payer=1001, valid_start=T0 - 7
    )
    inner_body.batch_key.CopyFrom(batch_key)
    inner = record_item(inner_body, at=T0 + 1, parent=T0)
    batch = Batch()
    rows_of_file(record_file([outer, inner]), batch)
    transactions = rows(batch, "transaction")
    assert transactions[0]["type"] == 74
    assert transactions[0]["inner_transactions"] == [encoded(1001), T0 - 7]
    assert transactions[1]["batch_key"] == batch_key.SerializeToString()
    assert transactions[1]["inner_transactions"] is None
