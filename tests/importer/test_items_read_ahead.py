"""What the unpacking process reads ahead of each item (``importer/items_read_ahead.py``): a body's span is the
place of the very bytes the whole parse gives as ``bodyBytes``, an item whose transaction holds its body
otherwise or does not parse gets none and is parsed whole in the import's process, with the same result and the
same refusal; the hbar transfers read ahead are the record's, and make the same rows and balances."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest
from tests.importer import stream_writer as write
from tests.importer.fixtures import FIRST, RECORDS, SECOND, record_bytes

from ledgermirror.importer._proto import protos
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch
from ledgermirror.importer.handlers.file_rows import items_of_file, rows_of_items
from ledgermirror.importer.handlers.item import UNREAD, Item, ItemError, item_of
from ledgermirror.importer.items_read_ahead import NOT_FOUND, hbar_transfers
from ledgermirror.importer.record_file import lay_out_v6
from ledgermirror.importer.record_file_reader import read_record_file, unpack_record_file, unpack_v6_file
from ledgermirror.importer.stream_unpacker import StreamUnpacker

T0 = 1_700_000_000_000_000_000
NAME = "2023-11-14T22_13_20Z.rcd.gz"
START = hashlib.sha384(b"genesis").digest()


def body(memo: str, payer: int = 1001) -> Any:
    modules = protos()
    return modules.transaction.TransactionBody(
        transactionID={"accountID": {"accountNum": payer}, "transactionValidStart": {"seconds": 5, "nanos": 7}},
        nodeAccountID={"accountNum": 3},
        transactionFee=100,
        memo=memo,
        cryptoTransfer={"transfers": {"accountAmounts": [{"accountID": {"accountNum": payer}, "amount": -5}]}},
    )


def signed(memo: str, *, sig_pairs: int = 1) -> bytes:
    """A ``Transaction`` holding ``signedTransactionBytes``, its ``SignedTransaction`` with a signature map."""
    modules = protos()
    pairs = [{"pubKeyPrefix": bytes([n]) * 4, "ed25519": bytes([n]) * 64} for n in range(sig_pairs)]
    inner = modules.transaction_contents.SignedTransaction(
        bodyBytes=body(memo).SerializeToString(), sigMap={"sigPair": pairs}
    )
    return modules.transaction.Transaction(signedTransactionBytes=inner.SerializeToString()).SerializeToString()


def legacy_body_bytes(memo: str) -> bytes:
    """A ``Transaction`` of before ``signedTransactionBytes``: ``bodyBytes`` and its own ``sigMap``."""
    modules = protos()
    return modules.transaction.Transaction(
        bodyBytes=body(memo).SerializeToString(),
        sigMap={"sigPair": [{"pubKeyPrefix": b"\1", "ed25519": b"\2" * 64}]},
    ).SerializeToString()


def deprecated_body(memo: str) -> bytes:
    return protos().transaction.Transaction(body=body(memo)).SerializeToString()


def with_transaction(nanos: int, transaction: bytes) -> write.Item:
    return write.Item(write.item(nanos).record, transaction)


MALFORMED_SIGNED = write.field(5, write.field(2, b"\xff\xff\xff"))
"""``signedTransactionBytes`` whose ``sigMap`` is not a message: the whole parse refuses it."""
MALFORMED_TRANSACTION = b"\x0a\xff\xff"
"""Not a ``Transaction`` (a length beyond the bytes)."""


def file_of(*transactions: bytes) -> write.Written:
    return write.v6([with_transaction(T0 + n, t) for n, t in enumerate(transactions)], START, 7)


def whole_parse(transaction: bytes) -> bytes | None:
    """``bodyBytes`` as the import parses it without a span (None: the body is held otherwise)."""
    modules = protos()
    signed_bytes = modules.transaction.Transaction.FromString(transaction).signedTransactionBytes
    return (
        modules.transaction_contents.SignedTransaction.FromString(signed_bytes).bodyBytes if signed_bytes else None
    )


def spans_of(content: bytes) -> list[tuple[int, int]]:
    laid_out = lay_out_v6(NAME, content)
    assert laid_out is not None and laid_out[0].ahead is not None
    bodies = laid_out[0].ahead.bodies
    return [(bodies[at], bodies[at + 1]) for at in range(0, len(bodies), 2)]


def test_a_body_found_is_the_bytes_the_whole_parse_gives() -> None:
    transactions = [signed("first"), signed("two pairs", sig_pairs=2), signed(""), signed("last")]
    written = file_of(*transactions)
    for transaction, (start, end) in zip(transactions, spans_of(written.content), strict=True):
        assert start > 0 and written.content[start:end] == whole_parse(transaction)


@pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")
def test_the_reference_fixtures_bodies_are_found_where_signed_transaction_bytes_hold_them() -> None:
    for stamp in (FIRST, SECOND):
        content = unpack_record_file(stamp, record_bytes(stamp)).content
        record = read_record_file(stamp, record_bytes(stamp))
        spans = spans_of(content)
        assert len(spans) == record.count > 0
        for item, span in zip(record.items, spans, strict=True):  # these hold bodyBytes and sigMap themselves
            found = whole_parse(item.transaction_bytes)
            assert span == NOT_FOUND if found is None else content[span[0] : span[1]] == found


def test_a_transaction_that_holds_its_body_otherwise_or_does_not_parse_gets_no_span() -> None:
    written = file_of(
        legacy_body_bytes("old"), deprecated_body("older"), MALFORMED_SIGNED, MALFORMED_TRANSACTION, b""
    )
    assert spans_of(written.content) == [NOT_FOUND] * 5


def test_the_body_alone_makes_the_item_the_whole_parse_makes() -> None:
    written = file_of(signed("found", sig_pairs=2), legacy_body_bytes("legacy"))
    unpacked = unpack_v6_file(NAME, written.stored)  # what the unpacking process answers
    assert unpacked.layout is not None and unpacked.layout.ahead is not None
    found = read_record_file(NAME, written.stored, unpacked)
    whole = read_record_file(NAME, written.stored)
    assert [i.body_bytes is not None for i in found.items] == [True, False]
    assert all(i.body_bytes is None for i in whole.items)
    for index, (there, here) in enumerate(zip(found.items, whole.items, strict=True)):
        from_span, from_whole = item_of(there, index), item_of(here, index)
        assert _fields(from_span) == _fields(from_whole)
        assert from_span.signature_map == from_whole.signature_map is not None
    first = item_of(found.items[0], 0)
    assert first.signed is UNREAD
    assert len(first.signature_map.sigPair) == 2 and first.signed is not UNREAD  # parsed once, when asked


def _fields(item: Item) -> tuple[Any, ...]:
    return (
        item.consensus_timestamp,
        item.body,
        item.body_name,
        item.transaction_bytes,
        item.payer_account_id,
        item.result,
        item.successful,
        item.type,
        item.transaction_id,
        item.record_bytes,
    )


def test_a_malformed_signature_map_is_refused_through_the_process_as_without_it() -> None:
    """The signature map is parsed here only when asked; an item whose whole parse fails has no span, so the
    import's own parse refuses it with the same error."""
    written = file_of(signed("fine"), MALFORMED_SIGNED)
    from_process = read_record_file(NAME, written.stored, process_answer(written))
    here = read_record_file(NAME, written.stored)
    assert from_process.items[0].body_bytes is not None and from_process.items[1].body_bytes is None
    item_of(from_process.items[0], 0)
    with pytest.raises(ItemError) as there:
        item_of(from_process.items[1], 1)
    with pytest.raises(ItemError) as without:
        item_of(here.items[1], 1)
    assert str(there.value) == str(without.value)


def process_answer(written: write.Written) -> Any:
    async def ask() -> Any:
        unpacker = StreamUnpacker()
        try:
            return await unpacker.unpack(NAME, written.stored)
        finally:
            await unpacker.close()

    return asyncio.run(ask())


def record_with(nanos: int, transfers: list[dict[str, Any]]) -> bytes:
    modules = protos()
    return modules.transaction_record.TransactionRecord(
        consensusTimestamp={"seconds": nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000},
        receipt={"status": 22},
        transferList={"accountAmounts": transfers},
    ).SerializeToString()


TRANSFERS = [
    {"accountID": {"accountNum": 1001}, "amount": -700},
    {"accountID": {"accountNum": 3}, "amount": 100},
    {"accountID": {"accountNum": 98}, "amount": 500},
    {"accountID": {"alias": b"\x12\x20" + b"\x07" * 32}, "amount": 60},
    {"accountID": {"shardNum": 1, "realmNum": 2, "accountNum": 3}, "amount": 40},
]


def transfer_file() -> write.Written:
    items = [
        write.Item(record_with(T0, TRANSFERS), signed("transfers")),
        write.Item(record_with(T0 + 1, []), signed("none")),
        write.Item(record_with(T0 + 2, TRANSFERS[:2]), legacy_body_bytes("legacy")),
    ]
    return write.v6(items, START, 9)


def test_the_transfers_read_ahead_are_the_records_own() -> None:
    written = transfer_file()
    laid_out = lay_out_v6(NAME, written.content)
    assert laid_out is not None and laid_out[0].ahead is not None
    whole = read_record_file(NAME, written.stored)
    assert laid_out[0].ahead.transfers == tuple(hbar_transfers(i.record) for i in whole.items)
    shard_one = (1 << 54) | (2 << 38) | 3  # 1.2.3 encoded (entity ids: 10 bits shard, 16 realm, 38 num)
    assert laid_out[0].ahead.transfers[0] == ((1001, -700), (3, 100), (98, 500), (0, 60), (shard_one, 40))
    assert laid_out[0].ahead.transfers[1:] == ((), ((1001, -700), (3, 100)))


@pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")
def test_the_reference_fixtures_transfers_are_read_ahead_as_their_records_hold_them() -> None:
    for stamp in (FIRST, SECOND):
        content = unpack_record_file(stamp, record_bytes(stamp)).content
        laid_out = lay_out_v6(stamp, content)
        assert laid_out is not None and laid_out[0].ahead is not None
        records = read_record_file(stamp, record_bytes(stamp)).items
        assert laid_out[0].ahead.transfers == tuple(hbar_transfers(i.record) for i in records)
        assert len(laid_out[0].ahead.transfers) == len(records) > 0


def rows_of(record: Any) -> Batch:
    batch = Batch()
    rows_of_items(record, items_of_file(record), batch)
    return batch


def test_the_rows_of_transfers_read_ahead_are_the_rows_of_the_record() -> None:
    written = transfer_file()
    through_process = read_record_file(NAME, written.stored, process_answer(written))
    here = read_record_file(NAME, written.stored)
    assert [i.transfers is not None for i in through_process.items] == [True] * 3
    assert all(i.transfers is None for i in here.items)
    ahead, whole = rows_of(through_process), rows_of(here)
    assert ahead.records("crypto_transfer") == whole.records("crypto_transfer")
    assert len(whole.records("crypto_transfer")) == 7
    assert ahead.entity_balances() == whole.entity_balances() != {}


def test_a_file_whose_record_does_not_parse_gets_nothing_read_ahead_and_is_refused_as_ever() -> None:
    written = write.v6([write.Item(b"\x0a\xff\xff", signed("broken record"))], START, 9)
    laid_out = lay_out_v6(NAME, written.content)
    assert laid_out is not None and laid_out[0].ahead is None
    with pytest.raises(StreamParseError) as there:
        read_record_file(NAME, written.stored, process_answer(written))
    with pytest.raises(StreamParseError) as here:
        read_record_file(NAME, written.stored)
    assert str(there.value) == str(here.value)


def rich_body(memo: str, **fields: Any) -> Any:
    """A body that sets what ``transaction_head`` reads beyond :func:`body`'s: every optional field."""
    message = body(memo)
    message.transactionID.nonce = 2
    message.transactionValidDuration.seconds = 120
    message.max_custom_fees.add(account_id={"accountNum": 1001}, fees=[{"amount": 9}])
    message.batch_key.ed25519 = b"\x05" * 32
    message.high_volume = True
    for name, value in fields.items():
        setattr(message, name, value)
    return message


def signed_body(message: Any) -> bytes:
    modules = protos()
    inner = modules.transaction_contents.SignedTransaction(bodyBytes=message.SerializeToString())
    return modules.transaction.Transaction(signedTransactionBytes=inner.SerializeToString()).SerializeToString()


def full_record(nanos: int) -> bytes:
    modules = protos()
    return modules.transaction_record.TransactionRecord(
        consensusTimestamp={"seconds": nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000},
        receipt={"status": 22},
        transactionHash=b"\x11" * 48,
        transactionFee=321,
        scheduleRef={"scheduleNum": 77},
        high_volume_pricing_multiplier=4,
    ).SerializeToString()


def head_file() -> write.Written:
    bare = body("")
    bare.ClearField("nodeAccountID")
    items = [
        write.Item(full_record(T0), signed_body(rich_body("héllo ✓"))),
        write.Item(record_with(T0 + 1, TRANSFERS[:2]), signed_body(bare)),  # no node, no duration
        write.Item(full_record(T0 + 2), legacy_body_bytes("legacy")),  # no span: no head
    ]
    return write.v6(items, START, 9)


def test_the_transaction_row_read_ahead_is_the_row_of_the_parsed_messages() -> None:
    written = head_file()
    through_process = read_record_file(NAME, written.stored, process_answer(written))
    here = read_record_file(NAME, written.stored)
    assert [i.head is not None for i in through_process.items] == [True, True, False]
    assert all(i.head is None for i in here.items)
    ahead, whole = rows_of(through_process).records("transaction"), rows_of(here).records("transaction")
    assert ahead == whole and len(whole) == 3
    first = dict(zip(RECORD_COLUMNS["transaction"], ahead[0], strict=True))
    assert first["memo"] == "héllo ✓".encode() and first["transaction_hash"] == b"\x11" * 48
    assert (first["valid_start_ns"], first["valid_duration_seconds"], first["node_account_id"]) == (
        5_000_000_007,
        120,
        3,
    )
    assert (first["max_fee"], first["charged_tx_fee"], first["scheduled"], first["nonce"]) == (100, 321, True, 2)
    assert first["max_custom_fees"] == [rich_body("").max_custom_fees[0].SerializeToString()]
    assert first["batch_key"] == b"\x12\x20" + b"\x05" * 32 and first["high_volume"] is True
    assert first["high_volume_pricing_multiplier"] == 4
    second = dict(zip(RECORD_COLUMNS["transaction"], ahead[1], strict=True))
    assert (second["node_account_id"], second["valid_duration_seconds"], second["scheduled"]) == (
        None,
        None,
        False,
    )
    assert (second["max_custom_fees"], second["batch_key"], second["memo"]) == (None, None, b"")


MALFORMED_BODY = (
    protos()
    .transaction.Transaction(
        signedTransactionBytes=protos()
        .transaction_contents.SignedTransaction(bodyBytes=b"\x0a\xff\xff")
        .SerializeToString()
    )
    .SerializeToString()
)
"""A ``SignedTransaction`` whose ``bodyBytes`` is not a ``TransactionBody``."""


def test_a_body_that_does_not_parse_gets_no_span_nor_head_and_is_refused_as_without_the_process() -> None:
    written = file_of(signed("fine"), MALFORMED_BODY)
    from_process = read_record_file(NAME, written.stored, process_answer(written))
    here = read_record_file(NAME, written.stored)
    assert [(i.body_bytes is not None, i.head is not None) for i in from_process.items] == [
        (True, True),
        (False, False),
    ]
    with pytest.raises(ItemError) as there:
        item_of(from_process.items[1], 1)
    with pytest.raises(ItemError) as without:
        item_of(here.items[1], 1)
    assert str(there.value) == str(without.value)


def crypto_transfer_body(memo: str, transfers: list[dict[str, Any]]) -> Any:
    message = body(memo)
    message.cryptoTransfer.transfers.ClearField("accountAmounts")
    for transfer in transfers:
        message.cryptoTransfer.transfers.accountAmounts.add(**transfer)
    return message


APPROVED = [
    {"accountID": {"accountNum": 2002}, "amount": -40, "is_approval": True},
    {"accountID": {"accountNum": 2003}, "amount": -10},
    {"accountID": {"accountNum": 2004}, "amount": 30, "is_approval": True},  # a credit: never an approved debit
    {"accountID": {"accountNum": 1001}, "amount": 20},
]
HOOKED = [
    {
        "accountID": {"accountNum": 2002},
        "amount": -40,
        "is_approval": True,
        "pre_tx_allowance_hook": {"hook_id": 6},
    },
    {"accountID": {"accountNum": 1001}, "amount": 40},
]


def debits_file() -> write.Written:
    topic = body("topic")
    topic.consensusSubmitMessage.topicID.topicNum = 5
    items = [
        write.Item(record_with(T0, APPROVED), signed_body(crypto_transfer_body("approved", APPROVED))),
        write.Item(record_with(T0 + 1, HOOKED[:1]), signed_body(crypto_transfer_body("hooked", HOOKED))),
        write.Item(record_with(T0 + 2, []), signed_body(topic)),
    ]
    return write.v6(items, START, 9)


def test_a_crypto_transfers_approved_debits_are_read_ahead_unless_a_transfer_calls_a_hook() -> None:
    written = debits_file()
    through_process = read_record_file(NAME, written.stored, process_answer(written))
    assert [i.approved_debits for i in through_process.items] == [((2002, -40),), None, None]
    here = read_record_file(NAME, written.stored)
    assert all(i.approved_debits is None for i in here.items)
    ahead, whole = rows_of(through_process), rows_of(here)
    assert ahead.records("crypto_transfer") == whole.records("crypto_transfer")
    approvals = [(row[0], row[2]) for row in whole.records("crypto_transfer") if row[4]]
    assert approvals == [(2002, -40), (2002, -40)]  # the debit the body approves, in both transactions
    debits = [[segment.allowance_debits for segment in batch.segments] for batch in (ahead, whole)]
    assert debits[0] == debits[1] == [{(2002, 1001, None): -80}]


def test_the_hooks_a_crypto_transfer_calls_are_queued_with_its_debits_read_ahead_or_not() -> None:
    written = debits_file()
    queues = []
    for record in (
        read_record_file(NAME, written.stored, process_answer(written)),
        read_record_file(NAME, written.stored),
    ):
        file = rows_of_items(record, items_of_file(record), Batch())
        queues.append(file.hook_queues)
    assert queues[0] == queues[1] == {T0 + 1: [(2002, 6)]}
