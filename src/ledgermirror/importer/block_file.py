"""Block stream files (HIP-1056): one serialized ``Block`` read into a typed :class:`BlockFile`.

The reader keeps the **exact bytes** of every ``BlockItem`` (the root hash is defined over them) and parses
the items it needs with the SDK's block stream classes. A block is, in order (``fees-and-streams.md`` D):
``block_header`` (required, SHA2_384), then either one ``record_file`` item (a *wrapped record block*: a legacy
record file with its sidecars) or rounds of ``round_header``, ``event_header`` and transactions
(``signed_transaction``, ``transaction_result``, ``transaction_output``*, ``trace_data``*, ``state_changes``*
of the same consensus time), then ``block_footer`` (required) and ``block_proof`` (required; later proof items
are ignored). A signed transaction without a result (a system transaction) is skipped, as are state changes
that belong to no transaction.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from ledgermirror.importer import block_hash as kinds
from ledgermirror.importer import protobuf_wire
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import V6_HEADER, RecordStreamLayout, SemanticVersion, lay_out_v6
from ledgermirror.ledger.protobuf import hapi, hapi_module

SHA2_384 = 0
_HASH_LENGTH = 48
_TRANSACTION_KINDS = frozenset(
    (
        kinds.SIGNED_TRANSACTION,
        kinds.TRANSACTION_RESULT,
        kinds.TRANSACTION_OUTPUT,
        kinds.TRACE_DATA,
        kinds.STATE_CHANGES,
    )
)


@functools.cache
def _block_class() -> Any:
    return hapi_module("block.stream.block_pb2").Block


@dataclass(slots=True)
class BlockTransaction:
    """One transaction of a native block with the items that belong to it (not frozen: one is made for every
    transaction, and a frozen dataclass's ``__init__`` costs a call per field; only the reader makes them)."""

    signed_transaction: bytes
    """The exact ``SignedTransaction`` bytes of the ``signed_transaction`` item."""
    result: Any
    """``TransactionResult``."""
    result_bytes: bytes
    """The exact ``TransactionResult`` bytes of the ``transaction_result`` item (the synthetic record is made of
    them: ``block_items``)."""
    outputs: tuple[Any, ...]
    """``TransactionOutput`` messages."""
    trace_data: tuple[Any, ...]
    state_changes: tuple[Any, ...]
    """``StateChanges`` messages with this transaction's consensus time."""
    consensus_timestamp: int
    """The result's, in nanoseconds since the epoch."""


@dataclass(frozen=True, slots=True)
class WrappedRecordFile:
    """The ``record_file`` item of a wrapped record block, as exact bytes."""

    creation_time: int
    """Nanoseconds: the record file's instant (its name)."""
    contents: bytes
    """The ``RecordStreamFile`` bytes; the v6 file is ``int32 6`` followed by them."""
    sidecars: tuple[bytes, ...]
    """Each ``SidecarFile`` as bytes (a v6 sidecar file's decompressed content)."""
    amendments: tuple[bytes, ...]
    """``RecordStreamItem`` bytes that replace or add items with the same consensus time."""

    @property
    def record_file_bytes(self) -> bytes:
        """The decompressed v6 record file this item carries."""
        return V6_HEADER + self.contents


@dataclass(frozen=True, slots=True)
class BlockFile:
    name: str
    size: int
    """Bytes as delivered (compressed)."""
    number: int
    timestamp: int
    """The header's ``block_timestamp`` in nanoseconds."""
    timestamp_bytes: bytes
    """The serialized ``block_timestamp`` (a leaf of the root hash)."""
    hapi_version: SemanticVersion
    software_version: SemanticVersion
    items: tuple[tuple[int, bytes], ...]
    """``(BlockItem oneof field number, exact serialized BlockItem)`` in stream order."""
    previous_root_hash: bytes
    all_blocks_root_hash: bytes
    start_state_root_hash: bytes
    proof: Any
    """The first ``BlockProof``."""
    wrapped: WrappedRecordFile | None
    transactions: tuple[BlockTransaction, ...]
    round_start: int | None
    round_end: int | None
    subtree_roots: tuple[bytes, ...] | None = None
    """The items' ``block_hash.subtree_roots``, computed ahead (:class:`BlockDigest`), or None."""

    @property
    def kind(self) -> str:
        return "wrapped record block" if self.wrapped is not None else "block"

    def root_hash(self) -> bytes:
        return kinds.block_root_hash(
            self.timestamp_bytes,
            self.items,
            self.previous_root_hash,
            self.all_blocks_root_hash,
            self.start_state_root_hash,
            roots=self.subtree_roots,
        )


@dataclass(frozen=True, slots=True)
class BlockDigest:
    """What verifying a block computes from its bytes alone, computed ahead by :func:`digest_block` (in the
    unpacking process, ``stream_unpacker``). It decides nothing: the import's process parses the block and runs
    every check with these in place of hashing the same bytes again."""

    subtree_roots: tuple[bytes, ...]
    """``block_hash.subtree_roots`` of the block's items."""
    record_file_hash: bytes | None = None
    """A wrapped record block: the SHA-384 of the v6 record file its item carries
    (:attr:`WrappedRecordFile.record_file_bytes`), else None."""
    record_layout: RecordStreamLayout | None = None
    """That file's ``record_file.record_stream_layout``, with what its items give ahead
    (``record_file.lay_out_v6``: the bodies' places, the hbar transfers, the ``transaction`` rows' values and
    the approved debits, ``items_read_ahead``)."""
    record_folded: tuple[bytes, bytes] | None = None
    """That file's running hash folded over its items from its start hash (``record_file.fold_items``)."""


def digest_block(name: str, data: bytes) -> BlockDigest:
    """The :class:`BlockDigest` of a serialized ``Block`` (uncompressed), read at the wire level. A wrapped record
    file the wire reads refuse gets no record part: the import's own reading then refuses the block."""
    items = split_items(name, data)
    roots = kinds.subtree_roots(items)
    wrapped = [item_bytes for kind, item_bytes in items if kind == kinds.RECORD_FILE]
    if len(wrapped) != 1:
        return BlockDigest(roots)
    try:
        contents, _, _ = wrapped_parts(name, wrapped[0])
    except StreamParseError:
        return BlockDigest(roots)
    content = V6_HEADER + contents
    laid_out = lay_out_v6(name, content)
    if laid_out is None:
        return BlockDigest(roots)
    return BlockDigest(roots, hashlib.sha384(content).digest(), *laid_out)


def nanos_of(stamp: Any) -> int:
    return int(stamp.seconds) * 1_000_000_000 + int(stamp.nanos)


def _semantic(version: Any) -> SemanticVersion:
    return SemanticVersion(int(version.major), int(version.minor), int(version.patch))


def split_items(name: str, data: bytes) -> list[tuple[int, bytes]]:
    """``(kind, exact BlockItem bytes)`` of each item of a serialized ``Block``."""
    items: list[tuple[int, bytes]] = []
    for number, wire_type, start, end in protobuf_wire.scan_fields(data, 0, len(data), name):
        if number != 1 or wire_type != protobuf_wire.LENGTH_DELIMITED:
            raise StreamParseError(name, f"unexpected Block field {number}")
        items.append((_item_kind(name, data, start, end), data[start:end]))
    return items


def _item_kind(name: str, data: bytes, start: int, end: int) -> int:
    """The number of the ``BlockItem`` field set in ``data[start:end]``: a oneof, so the last one set wins, as
    protobuf parsing does (0 when none is). Quick when one length-delimited field is all of it, as it is."""
    whole = protobuf_wire.whole_field(data, start, end, name)
    if whole is not None:
        return whole[0] >> 3
    kind = 0
    for item_number, _, _, _ in protobuf_wire.scan_fields(data, start, end, name):
        kind = item_number
    return kind


def wrapped_parts(name: str, item_bytes: bytes) -> tuple[bytes, tuple[bytes, ...], tuple[bytes, ...]]:
    """The exact bytes of a ``record_file`` item's contents, sidecars and amendments."""
    inner = protobuf_wire.sole_field(item_bytes, kinds.RECORD_FILE, name)
    parts: dict[int, list[bytes]] = {2: [], 3: [], 4: []}
    for number, wire_type, start, end in protobuf_wire.scan_fields(inner, 0, len(inner), name):
        if number in parts and wire_type == protobuf_wire.LENGTH_DELIMITED:
            parts[number].append(inner[start:end])
    if len(parts[2]) != 1:
        raise StreamParseError(name, "wrapped record block without exactly one record file")
    return parts[2][0], tuple(parts[3]), tuple(parts[4])


def _wrapped(name: str, item_bytes: bytes, message: Any) -> WrappedRecordFile:
    """The record file item with the exact bytes of its contents, sidecars and amendments."""
    contents, sidecars, amendments = wrapped_parts(name, item_bytes)
    return WrappedRecordFile(nanos_of(message.creation_time), contents, sidecars, amendments)


def read_block(
    name: str, data: bytes, size: int | None = None, subtree_roots: tuple[bytes, ...] | None = None
) -> BlockFile:
    """Parse one serialized ``Block`` (uncompressed); ``size`` is the file's size as delivered, ``subtree_roots``
    its items' (:attr:`BlockDigest.subtree_roots`) when computed ahead."""
    raw_items = split_items(name, data)
    try:
        block = _block_class().FromString(data)
    except hapi().DecodeError as error:
        raise StreamParseError(name, f"bad Block: {error}") from error
    messages = list(block.items)
    if len(messages) != len(raw_items):
        raise StreamParseError(name, "Block items do not match their encoding")
    if not messages or messages[0].WhichOneof("item") != "block_header":
        raise StreamParseError(name, f"Missing block header in block {name}")
    header = messages[0].block_header
    if header.hash_algorithm != SHA2_384:
        raise StreamParseError(name, f"unsupported block hash algorithm {header.hash_algorithm}")
    reader = _Reader(name, raw_items, messages)
    reader.read_body()
    footer, proof = reader.footer, reader.proof
    if footer is None:
        raise StreamParseError(name, f"Missing block footer in block {name}")
    if proof is None:
        raise StreamParseError(name, f"Missing block proof in block {name}")
    for what, value in (
        ("previous block root", footer.previous_block_root_hash),
        ("all block hashes root", footer.root_hash_of_all_block_hashes_tree),
        ("start of block state root", footer.start_of_block_state_root_hash),
    ):
        if len(value) not in (0, _HASH_LENGTH):
            raise StreamParseError(name, f"{what} hash has {len(value)} bytes")
    header_bytes = protobuf_wire.sole_field(raw_items[0][1], kinds.BLOCK_HEADER, name)
    return BlockFile(
        name=name,
        size=size if size is not None else len(data),
        number=int(header.number),
        timestamp=nanos_of(header.block_timestamp),
        timestamp_bytes=protobuf_wire.sole_field(header_bytes, 4, name),
        hapi_version=_semantic(header.hapi_proto_version),
        software_version=_semantic(header.software_version),
        items=tuple(raw_items),
        previous_root_hash=bytes(footer.previous_block_root_hash),
        all_blocks_root_hash=bytes(footer.root_hash_of_all_block_hashes_tree),
        start_state_root_hash=bytes(footer.start_of_block_state_root_hash),
        proof=proof,
        wrapped=reader.wrapped,
        transactions=tuple(reader.transactions),
        round_start=reader.rounds[0] if reader.rounds else None,
        round_end=reader.rounds[-1] if reader.rounds else None,
        subtree_roots=subtree_roots,
    )


class _Reader:
    """Walks the items after the header, grouping transactions with their results and state changes."""

    def __init__(self, name: str, raw_items: list[tuple[int, bytes]], messages: list[Any]) -> None:
        self.name = name
        self.raw_items = raw_items
        self.messages = messages
        self.footer: Any = None
        self.proof: Any = None
        self.wrapped: WrappedRecordFile | None = None
        self.transactions: list[BlockTransaction] = []
        self.rounds: list[int] = []
        self._signed: bytes | None = None
        self._open: dict[str, Any] | None = None

    def read_body(self) -> None:
        for (kind, item_bytes), message in zip(self.raw_items[1:], self.messages[1:], strict=True):
            if self.proof is not None:
                continue  # further proof items (and anything after the proof) are not read
            if self.footer is not None and kind != kinds.BLOCK_PROOF:
                raise StreamParseError(self.name, f"item {kind} after the block footer")
            self._item(kind, item_bytes, message)
        self._close()

    def _item(self, kind: int, item_bytes: bytes, message: Any) -> None:
        if kind == kinds.BLOCK_HEADER:
            raise StreamParseError(self.name, "a second block header")
        if kind == kinds.RECORD_FILE:
            if self.wrapped is not None or self.transactions or self._signed is not None:
                raise StreamParseError(self.name, "a record file item in a block with other transactions")
            self.wrapped = _wrapped(self.name, item_bytes, message.record_file)
        elif kind == kinds.ROUND_HEADER:
            self.rounds.append(int(message.round_header.round_number))
        elif kind in _TRANSACTION_KINDS:
            self._transaction_item(kind, item_bytes, message)
        elif kind == kinds.BLOCK_FOOTER:
            self._close()
            self.footer = message.block_footer
        elif kind == kinds.BLOCK_PROOF:
            if self.footer is None:
                raise StreamParseError(self.name, "block proof before the block footer")
            self.proof = message.block_proof

    def _transaction_item(self, kind: int, item_bytes: bytes, message: Any) -> None:
        if kind == kinds.SIGNED_TRANSACTION:
            self._close()
            if self.wrapped is not None:
                raise StreamParseError(self.name, "a transaction in a wrapped record block")
            self._signed = protobuf_wire.sole_field(item_bytes, kinds.SIGNED_TRANSACTION, self.name)
        elif kind == kinds.TRANSACTION_RESULT:
            if self._signed is None or self._open is not None:
                raise StreamParseError(self.name, "a transaction result without its signed transaction")
            result = message.transaction_result
            self._open = {
                "result": result,
                "stamp": nanos_of(result.consensus_timestamp),
                "result_bytes": protobuf_wire.sole_field(item_bytes, kinds.TRANSACTION_RESULT, self.name),
                "outputs": [],
                "traces": [],
                "changes": [],
            }
        elif kind == kinds.TRANSACTION_OUTPUT and self._open is not None:
            self._open["outputs"].append(message.transaction_output)
        elif kind == kinds.TRACE_DATA and self._open is not None:
            self._open["traces"].append(message.trace_data)
        elif kind == kinds.STATE_CHANGES:
            self._state_changes(message.state_changes)

    def _state_changes(self, changes: Any) -> None:
        stamp = nanos_of(changes.consensus_timestamp)
        if self._open is not None and stamp == self._open["stamp"]:
            self._open["changes"].append(changes)
            return
        if self.transactions and stamp == self.transactions[-1].consensus_timestamp:
            last = self.transactions[-1]
            self.transactions[-1] = BlockTransaction(
                last.signed_transaction,
                last.result,
                last.result_bytes,
                last.outputs,
                last.trace_data,
                (*last.state_changes, changes),
                last.consensus_timestamp,
            )
        # otherwise: state changes of no transaction (end of round, system work): skipped

    def _close(self) -> None:
        if self._signed is not None and self._open is not None:
            opened = self._open
            self.transactions.append(
                BlockTransaction(
                    self._signed,
                    opened["result"],
                    opened["result_bytes"],
                    tuple(opened["outputs"]),
                    tuple(opened["traces"]),
                    tuple(opened["changes"]),
                    opened["stamp"],
                )
            )
        self._signed = None  # a signed transaction without a result is skipped
        self._open = None
