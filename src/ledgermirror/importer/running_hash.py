"""The record stream running hash (v5 and v6): a SHA-384 chain folded item by item over the whole stream.

Each item is hashed as the platform's "record stream object": class id and version, then the length-prefixed
``TransactionRecord`` and ``Transaction`` bytes, all big-endian. The fold prefixes both the running hash and
the item hash with the hash object's class id and version, written little-endian as the platform's digest
helper does.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable

RECORD_STREAM_OBJECT_CLASS_ID = 0xE370929BA5429D8B
HASH_OBJECT_CLASS_ID = 0xF422DA83A251741E
CLASS_VERSION = 1
HASH_LENGTH = 48

_OBJECT_HEAD = struct.pack(">Qi", RECORD_STREAM_OBJECT_CLASS_ID, CLASS_VERSION)
_FOLD_HEAD = struct.pack("<Qi", HASH_OBJECT_CLASS_ID, CLASS_VERSION)
_LENGTH = struct.Struct(">i")


def item_hash(record_bytes: bytes, transaction_bytes: bytes) -> bytes:
    """SHA-384 of one item's record stream object."""
    digest = hashlib.sha384(_OBJECT_HEAD)
    digest.update(_LENGTH.pack(len(record_bytes)))
    digest.update(record_bytes)
    digest.update(_LENGTH.pack(len(transaction_bytes)))
    digest.update(transaction_bytes)
    return digest.digest()


def fold(running: bytes, next_item_hash: bytes) -> bytes:
    """The running hash after one more item."""
    return hashlib.sha384(_FOLD_HEAD + running + _FOLD_HEAD + next_item_hash).digest()


def running_hash(start: bytes, items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The running hash after ``items`` (pairs of record bytes and transaction bytes), from ``start``."""
    sha384 = hashlib.sha384
    head = _OBJECT_HEAD
    length = _LENGTH.pack
    fold_head = _FOLD_HEAD
    running = start
    for record_bytes, transaction_bytes in items:
        digest = sha384(head)
        digest.update(length(len(record_bytes)))
        digest.update(record_bytes)
        digest.update(length(len(transaction_bytes)))
        digest.update(transaction_bytes)
        running = sha384(fold_head + running + fold_head + digest.digest()).digest()
    return running
