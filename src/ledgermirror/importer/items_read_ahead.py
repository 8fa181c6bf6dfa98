"""What the unpacking process reads ahead from each item of a v6 record file, so that the import's process, whose
one interpreter paces the import, does not read it itself (``record_file.lay_out_v6`` calls :func:`read_ahead`):

* **where the body is.** The import's process reads two messages of an item: its record and its transaction's
  body. The body is two messages deep: a ``Transaction`` holds ``signedTransactionBytes``, a
  ``SignedTransaction`` whose ``bodyBytes`` is the body. Parsing those two (and freeing them) was about a
  third of what making an item cost the import's process (``item_of``). They are parsed here instead, with
  the same classes, and the import's process parses the body alone from the bytes found
  (``handlers.item.item_of``);
* **the hbar transfers** of the record (:func:`hbar_transfers`), which ``handlers.common.crypto_transfers``
  turns into rows and balances: reading them from the parsed record costs the import's process an object per
  transfer and per account id;
* **the ``transaction`` row's values** that the body and the record give (:func:`transaction_head`), which
  ``handlers.common.transaction_row`` completes with what the import's process knows (the item's place, its
  parent, its type): a field read from a parsed message costs the import's process an object per
  sub-message. The body is parsed here for them, with the same class;
* **a CryptoTransfer's approved debits** among the hbar transfers its body lists (:func:`split_transfers`),
  which its handler (``handlers.crypto.crypto_transfer``) and ``crypto_transfers`` read, unless one of those
  transfers calls a hook: the handler then reads the body's transfers itself, for the hooks' entries.

Nothing found here is taken on trust beyond what the same functions give on the same bytes. A body's span is
the place of bytes equal to the parsed ``bodyBytes``, so the body parsed from it is the body the whole parse
gives, and its head is read from that body. An item whose transaction or body does not parse here, or that
holds its body otherwise (``bodyBytes`` of the transaction itself, the deprecated ``body``), gets no span and no
head: the import's process parses its whole transaction as before, and refuses the file with the same error.
The signature map, which only schedules read, is parsed there when a handler asks for it
(``Item.signature_map``). A file with a record that does not parse gets nothing read ahead: the import's own
parse refuses it.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.handlers.ids import account_id, nanos, nullable

AMOUNT_HOOK_CALL = "hook_call"
"""The oneof of an ``AccountAmount``'s hook call (``handlers.hooks`` reads it too)."""

NOT_FOUND = (0, 0)
"""The span of an item whose body was not found: the import's process parses its whole transaction."""

Transfers = tuple[tuple[int, int], ...]
"""``(account, amount)`` of each hbar transfer of a record, in its order."""

TransactionHead = tuple[
    int, int | None, int | None, int, int, bytes, bytes, bool, int, list[bytes] | None, bytes | None, bool, int
]
"""The ``transaction`` row's values that an item's body and record give (:func:`transaction_head`), in the row's
order: ``valid_start_ns``, ``valid_duration_seconds``, ``node_account_id``, ``max_fee``, ``charged_tx_fee``,
``memo``, ``transaction_hash``, ``scheduled``, ``nonce``, ``max_custom_fees``, ``batch_key``, ``high_volume``,
``high_volume_pricing_multiplier``."""

ApprovedDebits = tuple[tuple[int, int], ...]
"""``(account, amount)`` of a CryptoTransfer's approved debits among its hbar transfers, in the body's order."""


@dataclass(frozen=True, slots=True)
class ReadAhead:
    """What :func:`read_ahead` read from a file's items, in their order."""

    bodies: array[int]
    """Two offsets into the file's content per item: where its ``TransactionBody``'s bytes are,
    :data:`NOT_FOUND` where they were not found."""
    transfers: tuple[Transfers, ...]
    """Each item's :func:`hbar_transfers`."""
    heads: tuple[TransactionHead | None, ...]
    """Each item's :func:`transaction_head`, None where its body was not found."""
    approved_debits: tuple[ApprovedDebits | None, ...]
    """A CryptoTransfer's approved debits (:func:`split_transfers`); None for any other item, one whose body was
    not found, or one with a transfer that calls a hook."""


def hbar_transfers(record: Any) -> Transfers:
    """The ``TransactionRecord``'s ``transferList``: each entry's account (encoded as ``ids.account_id`` encodes
    it: 0 for one given by alias) and amount."""
    return tuple((account_id(entry.accountID), entry.amount) for entry in record.transferList.accountAmounts)


def transaction_head(body: Any, record: Any, transaction_id: Any) -> TransactionHead:
    """The ``transaction`` row's values that the ``TransactionBody`` (whose ``transactionID`` is
    ``transaction_id``) and the ``TransactionRecord`` give (§1.4), as :data:`TransactionHead` orders them."""
    max_custom_fees = body.max_custom_fees
    return (
        nanos(transaction_id.transactionValidStart),
        body.transactionValidDuration.seconds if body.HasField("transactionValidDuration") else None,
        nullable(account_id(body.nodeAccountID)),
        body.transactionFee,
        record.transactionFee,
        body.memo.encode(),
        bytes(record.transactionHash),
        record.HasField("scheduleRef"),
        transaction_id.nonce,
        [fee.SerializeToString() for fee in max_custom_fees] if max_custom_fees else None,
        body.batch_key.SerializeToString() if body.HasField("batch_key") else None,
        body.high_volume,
        record.high_volume_pricing_multiplier,
    )


def split_transfers(transfers: Any) -> tuple[ApprovedDebits, list[Any]]:
    """A CryptoTransfer's hbar ``TransferList``: the approved debits among its entries (``is_approval`` and a
    negative amount), and the entries that call a hook, each in the body's order."""
    approved = []
    hooked = []
    for entry in transfers.accountAmounts:
        if entry.is_approval and entry.amount < 0:
            approved.append((account_id(entry.accountID), entry.amount))
        if entry.WhichOneof(AMOUNT_HOOK_CALL) is not None:
            hooked.append(entry)
    return tuple(approved), hooked


def _approved_debits(body: Any) -> ApprovedDebits | None:
    """:attr:`ReadAhead.approved_debits` of one item's body."""
    if body.WhichOneof("data") != "cryptoTransfer":
        return None
    approved, hooked = split_transfers(body.cryptoTransfer.transfers)
    return None if hooked else approved


def read_ahead(content: bytes, items: array[int]) -> ReadAhead | None:
    """What :class:`ReadAhead` holds of the items (``items``: four offsets into ``content`` per item, its record's
    span then its transaction's, as ``record_file.RecordStreamLayout`` holds them); None when a record does not
    parse."""
    modules = protos()
    parse_record = modules.transaction_record.TransactionRecord.FromString
    parse_transaction = modules.transaction.Transaction.FromString
    parse_signed = modules.transaction_contents.SignedTransaction.FromString
    parse_body = modules.transaction.TransactionBody.FromString
    decode_error = modules.decode_error
    bodies = array("q")
    transfers = []
    heads: list[TransactionHead | None] = []
    approved: list[ApprovedDebits | None] = []
    for at in range(0, len(items), 4):
        try:
            record = parse_record(content[items[at] : items[at + 1]])
        except decode_error:
            return None
        transfers.append(hbar_transfers(record))
        start = items[at + 2]
        end = items[at + 3]
        found = NOT_FOUND
        head = debits = None
        try:
            signed_bytes = parse_transaction(content[start:end]).signedTransactionBytes
            if signed_bytes:
                body_bytes = parse_signed(signed_bytes).bodyBytes
                where = content.find(body_bytes, start, end)
                if where > 0:
                    body = parse_body(body_bytes)
                    head = transaction_head(body, record, body.transactionID)
                    debits = _approved_debits(body)
                    found = (where, where + len(body_bytes))
        except decode_error:
            pass
        bodies.extend(found)
        heads.append(head)
        approved.append(debits)
    return ReadAhead(bodies, tuple(transfers), tuple(heads), tuple(approved))
