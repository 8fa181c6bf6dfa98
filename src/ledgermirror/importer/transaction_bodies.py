"""Where each record item's ``TransactionBody`` is in a v6 record file, found in the unpacking process.

The import's process reads two messages of an item: its record and its transaction's body. The body is two
messages deep: a ``Transaction`` holds ``signedTransactionBytes``, a ``SignedTransaction`` whose ``bodyBytes`` is
the body. Parsing those two (and freeing them) on the import's thread costs it about as much as parsing the body.
:func:`body_spans` parses them here instead, with the same classes, and says where each body's bytes are; the
import's process then parses the body from those bytes alone (``handlers.item.item_of``).

Nothing is trusted for being found here. A span is the place of bytes equal to the parsed ``bodyBytes``, so the
body parsed from it is the body the whole parse gives. An item whose transaction does not parse here, or that
holds its body otherwise (``bodyBytes`` of the transaction itself, the deprecated ``body``), gets no span: the
import's process parses its whole transaction as before, and refuses the file with the same error. The signature
map, which only schedules read, is parsed there when a handler asks for it (``Item.signature_map``).
"""

from __future__ import annotations

from array import array

from ledgermirror.importer._proto import protos

NOT_FOUND = (0, 0)
"""The span of an item whose body was not found: the import's process parses its whole transaction."""


def body_spans(content: bytes, items: array[int]) -> array[int]:
    """Two offsets into ``content`` per item (``items``: four per item, its record's span then its
    transaction's, as ``record_file.RecordStreamLayout`` holds them): where the bytes of its ``TransactionBody``
    are, :data:`NOT_FOUND` where they were not found."""
    modules = protos()
    parse_transaction = modules.transaction.Transaction.FromString
    parse_signed = modules.transaction_contents.SignedTransaction.FromString
    decode_error = modules.decode_error
    spans = array("q")
    for at in range(0, len(items), 4):
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
        spans.extend(found)
    return spans
