"""The block root hash of HIP-1056 (``fees-and-streams.md`` D, "Block root hash").

Node hashes are SHA-384 with a one-byte prefix: a leaf is ``0x00 ‖ bytes``, an internal node
``0x02 ‖ left ‖ right``, a node with a single child ``0x01 ‖ child``. The block's items feed five streaming
sub-trees by kind, each in stream order, with their exact serialized ``BlockItem`` bytes as leaves (footer and
proof items are not hashed). The footer's three hashes and the five sub-tree roots are the eight leaves (taken
as they are, without a leaf prefix) of a fixed tree combined pairwise; the block root is
``internal(leaf(serialized block timestamp), single(fixed root))``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

# BlockItem oneof field numbers
BLOCK_HEADER = 1
EVENT_HEADER = 2
ROUND_HEADER = 3
SIGNED_TRANSACTION = 4
TRANSACTION_RESULT = 5
TRANSACTION_OUTPUT = 6
STATE_CHANGES = 7
FILTERED_SINGLE_ITEM = 8
BLOCK_PROOF = 9
RECORD_FILE = 10
TRACE_DATA = 11
BLOCK_FOOTER = 12
REDACTED_ITEM = 19

CONSENSUS_HEADERS, INPUTS, OUTPUTS, STATE, TRACE = range(5)
SUBTREE_OF_ITEM = {
    EVENT_HEADER: CONSENSUS_HEADERS,
    ROUND_HEADER: CONSENSUS_HEADERS,
    SIGNED_TRANSACTION: INPUTS,
    BLOCK_HEADER: OUTPUTS,
    RECORD_FILE: OUTPUTS,
    TRANSACTION_OUTPUT: OUTPUTS,
    TRANSACTION_RESULT: OUTPUTS,
    STATE_CHANGES: STATE,
    TRACE_DATA: TRACE,
}
"""Which sub-tree a kind of item feeds; kinds not listed are not hashed."""


def leaf(data: bytes) -> bytes:
    return hashlib.sha384(b"\x00" + data).digest()


def internal(left: bytes, right: bytes) -> bytes:
    return hashlib.sha384(b"\x02" + left + right).digest()


def single(child: bytes) -> bytes:
    return hashlib.sha384(b"\x01" + child).digest()


EMPTY_TREE = hashlib.sha384(b"\x00").digest()


class StreamingTree:
    """A binary Merkle tree fed leaf by leaf, keeping only the pending roots of full sub-trees."""

    __slots__ = ("_count", "_pending")

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._count = 0

    def add(self, data: bytes) -> None:
        pending = self._pending
        pending.append(leaf(data))
        before = self._count
        while before & 1:
            right = pending.pop()
            pending[-1] = internal(pending[-1], right)
            before >>= 1
        self._count += 1

    def root(self) -> bytes:
        pending = self._pending
        if not pending:
            return EMPTY_TREE
        result = pending[-1]
        for value in reversed(pending[:-1]):
            result = internal(value, result)
        return result


def subtree_roots(items: Iterable[tuple[int, bytes]]) -> tuple[bytes, ...]:
    """The roots of the five sub-trees the block's ``items`` (``(kind, exact BlockItem bytes)`` in stream order)
    feed: the part of the root hash that reads every item, computed ahead where the import can
    (``stream_unpacker``)."""
    trees = [StreamingTree() for _ in range(5)]
    for kind, data in items:
        tree = SUBTREE_OF_ITEM.get(kind)
        if tree is not None:
            trees[tree].add(data)
    return tuple(tree.root() for tree in trees)


def block_root_hash(
    timestamp: bytes,
    items: Iterable[tuple[int, bytes]],
    previous_root: bytes,
    all_blocks_root: bytes,
    start_state_root: bytes,
    *,
    roots: tuple[bytes, ...] | None = None,
) -> bytes:
    """The root hash of a block: ``timestamp`` is the serialized ``block_timestamp`` of its header, ``items``
    its ``(kind, exact BlockItem bytes)`` in stream order, the three hashes its footer's; ``roots``: the items'
    :func:`subtree_roots`, when computed already."""
    if roots is None:
        roots = subtree_roots(items)
    values = [previous_root, all_blocks_root, start_state_root, *roots]
    while len(values) > 1:
        values = [internal(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    return internal(leaf(timestamp), single(values[0]))
