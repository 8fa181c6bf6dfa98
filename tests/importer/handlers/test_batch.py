"""Batch-level behaviour that needs no database: entity_transaction, atomic batches, item parsing."""

from __future__ import annotations

import pytest
from tests.importer.handlers.items import (
    PAYER,
    T0,
    basic,
    body,
    crypto_transfer,
    encoded,
    module,
    record_file,
    record_item,
    timestamp_pb2,
    transaction_pb2,
)

from ledgermirror.importer.handlers import common, ids
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.handlers.item import item_of
from ledgermirror.importer.record_file import RecordItem


def rows(batch: Batch, table: str) -> list[dict[str, object]]:
    """The table's rows by column name (those held as values in the model's order made into dicts)."""
    held = [row for segment in batch.segments for row in segment.inserts.get(table, [])]
    columns = RECORD_COLUMNS.get(table)
    return held if columns is None else [dict(zip(columns, row, strict=True)) for row in held]


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


def test_item_of_reads_the_body_and_the_success_rule() -> None:
    item = item_of(crypto_transfer([(PAYER, -1), (1001, 1)], at=T0 + 5), 4)
    assert (item.body_name, item.type, item.index, item.payer_account_id) == ("cryptoTransfer", 14, 4, PAYER)
    assert (item.consensus_timestamp, item.result, item.successful) == (T0 + 5, 22, True)
    assert item.signature_map is not None
    assert [pair.pubKeyPrefix for pair in item.signature_map.sigPair] == [b"\x01"]
    for status, successful in ((220, True), (104, True), (23, False), (1, False), (7, False)):
        assert item_of(crypto_transfer([], at=T0, status=status), 0).successful is successful


def test_item_of_legacy_body_bytes_and_unknown_type() -> None:
    """``bodyBytes`` + ``sigMap`` (before signedTransactionBytes); a body whose oneof this SDK does not know
    takes its single unknown field's number as type."""
    message = body("util_prng", module("util_prng_pb2").UtilPrngTransactionBody())
    unknown = message.SerializeToString() + bytes([0xBA, 0x3E, 0x00])  # field 999, length-delimited, empty
    legacy = transaction_pb2.Transaction(bodyBytes=unknown).SerializeToString()
    record = record_item(message, at=T0).record
    item = item_of(RecordItem(T0, record.SerializeToString(), legacy, record), 0)
    assert item.body_name == "util_prng"
    assert item.type == 52
    plain = transaction_pb2.TransactionBody(transactionID=message.transactionID)
    bare = plain.SerializeToString() + bytes([0xBA, 0x3E, 0x00])
    unknown_item = item_of(
        RecordItem(T0, record.SerializeToString(), transaction_pb2.Transaction(bodyBytes=bare).SerializeToString(),
                   record),
        0,
    )  # fmt: skip
    assert (unknown_item.body_name, unknown_item.type) == ("", 999)


def test_item_of_reads_the_signature_map_of_each_form() -> None:
    """The signature map comes from the message that holds it: ``SignedTransaction`` (above), the legacy
    ``Transaction`` with ``bodyBytes`` or the deprecated ``body``; none when that message has no ``sigMap``."""
    message = body("util_prng", module("util_prng_pb2").UtilPrngTransactionBody())
    record = record_item(message, at=T0).record
    signatures = basic.SignatureMap(sigPair=[{"pubKeyPrefix": b"\x02", "ed25519": b"s"}])
    forms = {
        "bodyBytes": transaction_pb2.Transaction(bodyBytes=message.SerializeToString(), sigMap=signatures),
        "body": transaction_pb2.Transaction(body=message, sigMap=signatures),
        "unsigned": transaction_pb2.Transaction(bodyBytes=message.SerializeToString()),
    }
    read = {
        name: item_of(RecordItem(T0, record.SerializeToString(), form.SerializeToString(), record), 0)
        for name, form in forms.items()
    }
    for name in ("bodyBytes", "body"):
        assert read[name].body == message
        assert [pair.pubKeyPrefix for pair in read[name].signature_map.sigPair] == [b"\x02"]
    assert read["unsigned"].signature_map is None
    assert read["body"].transaction_id == message.transactionID


def test_timestamps_are_clamped_to_int64() -> None:
    """``ids.nanos``: a ``Timestamp`` out of the int64 range of nanoseconds is clamped to its ends."""
    limit = 2**63 - 1
    assert ids.nanos(timestamp_pb2.Timestamp(seconds=limit // 10**9, nanos=limit % 10**9)) == limit
    assert ids.nanos(timestamp_pb2.Timestamp(seconds=limit // 10**9, nanos=999_999_999)) == limit
    assert ids.nanos(timestamp_pb2.Timestamp(seconds=-(2**62), nanos=0)) == -(2**63)
    assert ids.nanos(timestamp_pb2.Timestamp(seconds=-5, nanos=1)) == -4_999_999_999


def test_the_row_literals_follow_the_model() -> None:
    """``common`` writes its most frequent rows by position: it checks the positions against the model's
    columns on import, and a different order is an error."""
    assert (
        common._in_order("transaction_hash", *RECORD_COLUMNS["transaction_hash"])
        == RECORD_COLUMNS["transaction_hash"]
    )
    with pytest.raises(RuntimeError, match="transaction_hash's columns are now"):
        common._in_order("transaction_hash", "hash", "consensus_timestamp", "payer_account_id", "hash_suffix")
