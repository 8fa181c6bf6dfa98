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
  transfer and per account id.

Nothing found here is taken on trust beyond what the same functions give on the same bytes. A body's span is
the place of bytes equal to the parsed ``bodyBytes``, so the body parsed from it is the body the whole parse
gives. An item whose transaction does not parse here, or that holds its body otherwise (``bodyBytes`` of the
transaction itself, the deprecated ``body``), gets no span: the import's process parses its whole transaction
as before, and refuses the file with the same error. The signature map, which only schedules read, is parsed
there when a handler asks for it (``Item.signature_map``). A file with a record that does not parse gets
nothing read ahead: the import's own parse refuses it.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.handlers.ids import account_id

NOT_FOUND = (0, 0)
"""The span of an item whose body was not found: the import's process parses its whole transaction."""

Transfers = tuple[tuple[int, int], ...]
"""``(account, amount)`` of each hbar transfer of a record, in its order."""


@dataclass(frozen=True, slots=True)
class ReadAhead:
    """What :func:`read_ahead` read from a file's items, in their order."""

    bodies: array[int]
    """Two offsets into the file's content per item: where its ``TransactionBody``'s bytes are,
    :data:`NOT_FOUND` where they were not found."""
    transfers: tuple[Transfers, ...]
    """Each item's :func:`hbar_transfers`."""


def hbar_transfers(record: Any) -> Transfers:
    """The ``TransactionRecord``'s ``transferList``: each entry's account (encoded as ``ids.account_id`` encodes
    it: 0 for one given by alias) and amount."""
    return tuple((account_id(entry.accountID), entry.amount) for entry in record.transferList.accountAmounts)


def read_ahead(content: bytes, items: array[int]) -> ReadAhead | None:
    """The items' bodies and transfers (``items``: four offsets into ``content`` per item, its record's span then
    its transaction's, as ``record_file.RecordStreamLayout`` holds them); None when a record does not parse."""
    modules = protos()
    parse_record = modules.transaction_record.TransactionRecord.FromString
    parse_transaction = modules.transaction.Transaction.FromString
    parse_signed = modules.transaction_contents.SignedTransaction.FromString
    decode_error = modules.decode_error
    bodies = array("q")
    transfers = []
    for at in range(0, len(items), 4):
        try:
            transfers.append(hbar_transfers(parse_record(content[items[at] : items[at + 1]])))
        except decode_error:
            return None
        start = items[at + 2]
        end = items[at + 3]
        found = NOT_FOUND
        try:
            signed_bytes = parse_transaction(content[start:end]).signedTransactionBytes
            if signed_bytes:
                body = parse_signed(signed_bytes).bodyBytes
                where = content.find(body, start, end)
                if where > 0:
                    found = (where, where + len(body))
        except decode_error:
            pass
        bodies.extend(found)
    return ReadAhead(bodies, tuple(transfers))
