"""A native block transaction's synthetic record, made from the result's own bytes (``block_items``), and the
wire-format moves it rests on (``protobuf_wire.retagged``, ``sole_field``, ``length_delimited``).

The expected records are built here field by field, by the names HAPI gives each field of a
``TransactionResult`` and of the ``TransactionRecord`` that carries it (``importer-transaction-handlers.md``
§6.1), not by the code under test."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from ledgermirror.importer import protobuf_wire
from ledgermirror.importer._proto import protos
from ledgermirror.importer.block_file import BlockTransaction, split_items
from ledgermirror.importer.block_items import record_item_of, synthetic_record
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.handlers.item import ItemError, item_of
from ledgermirror.importer.record_file import RecordItem
from ledgermirror.ledger.protobuf import hapi_module
from ledgermirror.ledger.transaction_codes import result_number

SUCCESS = result_number("SUCCESS")


def _result_class() -> Any:
    return hapi_module("block.stream.output.transaction_result_pb2").TransactionResult


def _full_result() -> Any:
    result = _result_class()()
    result.status = SUCCESS
    result.consensus_timestamp.seconds, result.consensus_timestamp.nanos = 1_700_000_000, 123
    result.parent_consensus_timestamp.seconds = 1_699_999_999
    result.schedule_ref.scheduleNum = 77
    result.transaction_fee_charged = 1_234_567  # a varint of three bytes
    payer = result.transfer_list.accountAmounts.add()
    payer.accountID.accountNum, payer.amount = 1001, -1_234_567
    node = result.transfer_list.accountAmounts.add()
    node.accountID.accountNum, node.amount = 3, 1_234_567
    for token_number in (500, 501):
        token_list = result.token_transfer_lists.add()
        token_list.token.tokenNum = token_number
        moved = token_list.transfers.add()
        moved.accountID.accountNum, moved.amount = 1002, 10
    association = result.automatic_token_associations.add()
    association.token_id.tokenNum, association.account_id.accountNum = 500, 1002
    reward = result.paid_staking_rewards.add()
    reward.accountID.accountNum, reward.amount = 1001, 5
    result.congestion_pricing_multiplier = 9  # no place in a record
    fee = result.assessed_custom_fees.add()
    fee.amount, fee.fee_collector_account_id.accountNum = 3, 98
    result.high_volume_pricing_multiplier = 4
    return result


def _body(memo: str = "a memo") -> Any:
    body = protos().transaction.TransactionBody()
    body.transactionID.accountID.accountNum = 1001
    body.transactionID.transactionValidStart.seconds = 1_699_999_990
    body.memo = memo
    body.cryptoTransfer.SetInParent()
    return body


def _signed(body: Any) -> bytes:
    signed = protos().transaction_contents.SignedTransaction()
    signed.bodyBytes = body.SerializeToString()
    pair = signed.sigMap.sigPair.add()
    pair.pubKeyPrefix, pair.ed25519 = b"\x01", b"\x02" * 64
    return bytes(signed.SerializeToString())


def _transaction(result: Any, signed: bytes, result_bytes: bytes | None = None) -> BlockTransaction:
    stamp = result.consensus_timestamp
    return BlockTransaction(
        signed,
        result,
        result.SerializeToString() if result_bytes is None else result_bytes,
        (),
        (),
        (),
        stamp.seconds * 1_000_000_000 + stamp.nanos,
    )


def _expected(result: Any, body: Any, signed: bytes) -> Any:
    """The record as HAPI's field names say it: each result field under the record field of the same meaning."""
    record = protos().transaction_record.TransactionRecord()
    record.receipt.status = result.status
    record.consensusTimestamp.CopyFrom(result.consensus_timestamp)
    if result.HasField("parent_consensus_timestamp"):
        record.parent_consensus_timestamp.CopyFrom(result.parent_consensus_timestamp)
    if result.HasField("schedule_ref"):
        record.scheduleRef.CopyFrom(result.schedule_ref)
    record.transactionFee = result.transaction_fee_charged
    if result.HasField("transfer_list"):
        record.transferList.CopyFrom(result.transfer_list)
    record.tokenTransferLists.extend(result.token_transfer_lists)
    record.automatic_token_associations.extend(result.automatic_token_associations)
    record.paid_staking_rewards.extend(result.paid_staking_rewards)
    record.assessed_custom_fees.extend(result.assessed_custom_fees)
    record.high_volume_pricing_multiplier = result.high_volume_pricing_multiplier
    record.memo = body.memo
    record.transactionID.CopyFrom(body.transactionID)
    record.transactionHash = hashlib.sha384(signed).digest()
    return record


def test_every_result_field_is_carried_under_the_records_name() -> None:
    result, body = _full_result(), _body()
    signed = _signed(body)
    record = synthetic_record(_transaction(result, signed), body)
    assert record == _expected(result, body, signed)
    assert record.transactionFee == 1_234_567
    assert [t.token.tokenNum for t in record.tokenTransferLists] == [500, 501]
    assert record.high_volume_pricing_multiplier == 4
    assert record.SerializeToString() == _expected(result, body, signed).SerializeToString()


def test_a_result_with_status_zero_still_has_a_receipt() -> None:
    result = _result_class()()
    result.consensus_timestamp.seconds = 1_700_000_000
    body = _body(memo="")
    signed = _signed(body)
    record = synthetic_record(_transaction(result, signed), body)
    assert record.HasField("receipt")
    assert record.receipt.status == 0
    assert record == _expected(result, body, signed)


def test_a_message_field_given_twice_is_merged_and_unknown_fields_are_left_out() -> None:
    result = _result_class()()
    result.status = SUCCESS
    first, second = _result_class()(), _result_class()()
    first.consensus_timestamp.seconds = 1_700_000_000
    second.consensus_timestamp.nanos = 5
    unknown = protobuf_wire.key_of(99, protobuf_wire.VARINT) + b"\x07"
    data = result.SerializeToString() + first.SerializeToString() + unknown + second.SerializeToString()
    parsed = _result_class().FromString(data)
    body = _body()
    signed = _signed(body)
    record = synthetic_record(_transaction(parsed, signed, data), body)
    assert record.consensusTimestamp.seconds == 1_700_000_000
    assert record.consensusTimestamp.nanos == 5
    assert record == _expected(parsed, body, signed)
    assert len(UnknownFieldSet(record)) == 0


@pytest.mark.parametrize(
    "data",
    [
        b"\x12\x05\x08\x01",  # consensus_timestamp longer than what is left
        b"\x30\xff\xff",  # transaction_fee_charged: a varint that does not end
        b"\x30" + b"\xff" * 10 + b"\x01",  # a varint of eleven bytes
        b"\x0b",  # wire type 3 (groups)
        b"\x02\x00",  # field number 0
    ],
)
def test_a_malformed_result_is_refused(data: bytes) -> None:
    body = _body()
    with pytest.raises(StreamParseError, match=r"block-7\.blk"):
        synthetic_record(_transaction(_result_class()(), _signed(body), data), body, name="block-7.blk")


def test_the_item_is_made_of_what_the_block_parsed_once() -> None:
    result, body = _full_result(), _body()
    signed = _signed(body)
    record_item = record_item_of("block-7.blk", _transaction(result, signed), [])
    wrapper = protos().transaction.Transaction(signedTransactionBytes=signed)
    assert record_item.transaction_bytes == wrapper.SerializeToString()
    assert record_item.record_bytes == _expected(result, body, signed).SerializeToString()
    item = item_of(record_item, 0)
    assert item.body == body
    assert item.body_name == "cryptoTransfer"
    assert item.payer_account_id == 1001
    assert item.signature_map.sigPair[0].ed25519 == b"\x02" * 64
    assert item.consensus_timestamp == 1_700_000_000_000_000_123


def test_a_transaction_without_signed_bytes_is_refused_as_a_records_would_be() -> None:
    result = _full_result()
    record_item = record_item_of("block-7.blk", _transaction(result, b""), [])
    assert record_item.parsed is None
    assert record_item.transaction_bytes == b""
    with pytest.raises(ItemError, match="Error parsing transactionBody"):
        item_of(record_item, 0)
    plain = RecordItem(1, b"", b"", protos().transaction_record.TransactionRecord())
    with pytest.raises(ItemError, match="Error parsing transactionBody"):
        item_of(plain, 0)


def test_retagged_moves_only_the_keys_given() -> None:
    varint_key = protobuf_wire.key_of(6, protobuf_wire.VARINT)[0]
    wrong_wire = protobuf_wire.key_of(6, protobuf_wire.FIXED32) + b"\x01\x02\x03\x04"
    data = b"\x30\x96\x01" + wrong_wire + b"\x08\x16"
    parts, others = protobuf_wire.retagged(data, {varint_key: b"\x68"}, "f")
    assert parts == [b"\x68", b"\x96\x01"]
    assert others == {protobuf_wire.key_of(6, protobuf_wire.FIXED32)[0]: b"\x01\x02\x03\x04", 0x08: b"\x16"}


@pytest.mark.parametrize("size", [0, 1, 127, 128, 16_383, 16_384, 2_100_000])
def test_a_length_delimited_field_reads_back(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    encoded = protobuf_wire.length_delimited(protobuf_wire.key_of(5, protobuf_wire.LENGTH_DELIMITED), payload)
    assert protobuf_wire.sole_field(encoded, 5, "f") == payload
    assert list(protobuf_wire.scan_fields(encoded, 0, len(encoded), "f")) == [
        (5, protobuf_wire.LENGTH_DELIMITED, len(encoded) - size, len(encoded))
    ]


def test_sole_field_takes_the_last_length_delimited_field_of_its_number() -> None:
    key = protobuf_wire.key_of(4, protobuf_wire.LENGTH_DELIMITED)
    two = protobuf_wire.length_delimited(key, b"first") + protobuf_wire.length_delimited(key, b"second")
    assert protobuf_wire.sole_field(two, 4, "f") == b"second"
    other_wire = protobuf_wire.key_of(4, protobuf_wire.VARINT) + b"\x01"
    assert protobuf_wire.sole_field(protobuf_wire.length_delimited(key, b"x") + other_wire, 4, "f") == b"x"
    assert protobuf_wire.sole_field(other_wire, 4, "f") == b""
    assert protobuf_wire.sole_field(b"", 4, "f") == b""
    with pytest.raises(StreamParseError):
        protobuf_wire.sole_field(key + b"\x05ab", 4, "f")  # shorter than it says


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**32, 2**63 - 1, 2**64 - 1])
def test_varints_read_back(value: int) -> None:
    encoded = protobuf_wire.encode_varint(value)
    assert protobuf_wire.read_varint(encoded, 0, len(encoded), "f") == (value, len(encoded))


def test_an_items_kind_is_its_last_field_as_protobuf_parsing_takes_it() -> None:
    def item(*fields: tuple[int, bytes]) -> bytes:
        inner = b"".join(
            protobuf_wire.length_delimited(protobuf_wire.key_of(number, protobuf_wire.LENGTH_DELIMITED), value)
            for number, value in fields
        )
        return protobuf_wire.length_delimited(protobuf_wire.key_of(1, protobuf_wire.LENGTH_DELIMITED), inner)

    long_value = b"\x00" * 300  # a length of two bytes
    data = item((4, b"signed")) + item((5, long_value)) + item((4, b"a"), (5, b"b")) + item() + item((23, b"x"))
    assert [kind for kind, _ in split_items("f", data)] == [4, 5, 5, 0, 23]
    varint_only = protobuf_wire.length_delimited(
        protobuf_wire.key_of(1, protobuf_wire.LENGTH_DELIMITED), b"\x20\x01"
    )
    assert split_items("f", varint_only) == [(4, b"\x20\x01")]


def test_a_negative_varint_is_written_as_protobuf_writes_an_int64() -> None:
    encoded = protobuf_wire.encode_varint(-1)
    assert len(encoded) == 10
    assert protobuf_wire.read_varint(encoded, 0, len(encoded), "f") == (2**64 - 1, 10)
    record = protos().transaction_record.TransactionRecord()
    record.receipt.SetInParent()
    assert protobuf_wire.message_field(1, b"") == record.SerializeToString()
    assert (
        protobuf_wire.varint_field(6, 1_234_567)
        == protos().transaction_record.TransactionRecord(transactionFee=1_234_567).SerializeToString()
    )
