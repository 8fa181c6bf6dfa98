"""Record stream files: one typed :class:`RecordFile` for every version, and the v6 (protobuf) reader.

``record_file_reader.read_record_file`` takes the bytes as stored (gzip-compressed or not) and dispatches on
the leading big-endian int32 version: 6 is read here, 5, 2 and 1 by :mod:`.record_file_legacy`.

What the fields hold, per version (``fees-and-streams.md`` B.1):

================  ======================================  ==========================================
field             v5 / v6                                 v1 / v2
================  ======================================  ==========================================
previous_hash     start object running hash               previous file's file hash (header)
hash              end object running hash                 the file hash
file_hash         SHA-384 of the (decompressed) bytes     v2: SHA-384(header ‖ SHA-384(body)); v1: of all
metadata_hash     v6: SHA-384(6, hapi, start, end, block) none
                  v5: SHA-384(5, hapi, stream version,
                  start hash object, end hash object)
block_number      v6: from the file; v5: none             none
================  ======================================  ==========================================
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import itertools
import struct
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ledgermirror.importer import protobuf_wire
from ledgermirror.importer._proto import protos
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.items_read_ahead import (
    ApprovedDebits,
    ReadAhead,
    TransactionHead,
    Transfers,
    read_ahead,
)
from ledgermirror.importer.running_hash import HASH_LENGTH, running_hash
from ledgermirror.importer.stream_names import instant_of
from ledgermirror.ledger.int64 import to_signed64

SHA_384 = 1
"""``HashAlgorithm.SHA_384`` in a v6 ``HashObject``."""

_GZIP_MAGIC = b"\x1f\x8b"
V6_HEADER = struct.pack(">i", 6)
"""A v6 file's first bytes (its version); its ``RecordStreamFile`` follows."""
_RECORD_STREAM_ITEMS = 3


class SemanticVersion(NamedTuple):
    major: int
    minor: int
    patch: int


ItemAhead = tuple[bytes | None, Transfers | None, TransactionHead | None, ApprovedDebits | None]
"""What the unpacking process read of one item: its body's bytes (None: not found), its hbar transfers, its
``transaction`` row's head (None: not read) and a CryptoTransfer's approved debits (None: not read)."""


@dataclass(slots=True)
class RecordItem:
    """One transaction of a record file: its exact bytes, its parsed record and its consensus time (not frozen:
    one is made per transaction, and a frozen dataclass's ``__init__`` costs a call per field)."""

    consensus_timestamp: int
    """Nanoseconds since the epoch, from ``TransactionRecord.consensusTimestamp``."""
    record_bytes: bytes
    transaction_bytes: bytes
    record: Any
    """The parsed ``TransactionRecord``."""
    parsed: tuple[Any, Any] | None = None
    """The ``TransactionBody`` and the ``SignedTransaction`` when the reader has parsed them already (a native
    block's: ``block_items``); None: the item parses ``transaction_bytes`` (``handlers.item.item_of``)."""
    body_bytes: bytes | None = None
    """The ``TransactionBody``'s bytes inside ``transaction_bytes`` when the unpacking process found them
    (:mod:`.items_read_ahead`): the item parses the body alone; None: it parses the whole transaction."""
    transfers: Transfers | None = None
    """The record's hbar transfers when the unpacking process read them (``items_read_ahead.hbar_transfers``);
    None: they are read from :attr:`record`."""
    head: TransactionHead | None = None
    """The ``transaction`` row's values its body and record give, when the unpacking process read them
    (``items_read_ahead.transaction_head``); None: they are read from the parsed messages."""
    approved_debits: ApprovedDebits | None = None
    """A CryptoTransfer's approved debits, when the unpacking process read them
    (``items_read_ahead.split_transfers``); None: its handler reads them from the body."""

    def transaction(self) -> Any:
        """The parsed ``Transaction`` (parsed on each call; the importer keeps what it needs)."""
        return protos().transaction.Transaction.FromString(self.transaction_bytes)


@dataclass(frozen=True, slots=True)
class SidecarMetadata:
    """A v6 record file's statement about one of its sidecar files."""

    id: int
    hash: bytes
    """SHA-384 of the decompressed sidecar file."""
    types: tuple[int, ...]
    """``SidecarType`` values: 1 contract state change, 2 contract action, 3 contract bytecode."""


@dataclass(frozen=True, slots=True)
class RecordFile:
    name: str
    version: int
    hapi_version: SemanticVersion | None
    previous_hash: bytes
    hash: bytes
    file_hash: bytes
    metadata_hash: bytes | None
    block_number: int | None
    items: tuple[RecordItem, ...]
    sidecars: tuple[SidecarMetadata, ...]
    size: int
    """Bytes as stored (compressed for v6)."""
    consensus_start: int
    consensus_end: int
    folded: tuple[bytes, bytes] | None = None
    """v6: the running hash folded over the items from a start hash, computed while the file was unpacked
    (``stream_unpacker``): ``(start, end)``. Verification takes its ``end`` only when ``start`` is the file's own
    ``previous_hash``, and folds the items itself otherwise (and for every other version)."""

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def has_running_hash(self) -> bool:
        """v5 and v6 chain by object running hash (``previous_hash``/``hash`` are its start and end)."""
        return self.version >= 5


def decompress(name: str, data: bytes) -> bytes:
    """The bytes, gunzipped when they are a gzip stream."""
    if not data.startswith(_GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise StreamParseError(name, f"bad gzip stream: {error}") from error


def parse_items(
    name: str, pairs: Iterable[tuple[bytes, bytes]], ahead: Iterable[ItemAhead] | None = None
) -> list[RecordItem]:
    """Items from (record bytes, transaction bytes) pairs: each record parsed for its consensus time; ``ahead``:
    what the unpacking process read of each (:attr:`RecordItem.body_bytes`, :attr:`RecordItem.transfers`,
    :attr:`RecordItem.head`, :attr:`RecordItem.approved_debits`)."""
    modules = protos()
    from_string = modules.transaction_record.TransactionRecord.FromString
    items = []
    try:
        given = itertools.repeat((None, None, None, None)) if ahead is None else ahead  # one per pair when given
        for (record_bytes, transaction_bytes), (body, transfers, head, debits) in zip(pairs, given, strict=False):
            record = from_string(record_bytes)
            stamp = record.consensusTimestamp
            nanos = stamp.seconds * 1_000_000_000 + stamp.nanos
            items.append(
                RecordItem(nanos, record_bytes, transaction_bytes, record, None, body, transfers, head, debits)
            )
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad TransactionRecord (item {len(items)}): {error}") from error
    return items


@dataclass(frozen=True, slots=True)
class RecordStreamContents:
    """The fields of one serialized ``RecordStreamFile``, items as exact bytes."""

    hapi_version: SemanticVersion
    start_running_hash: bytes
    end_running_hash: bytes | None
    """None when the message has no end running hash (allowed only where the caller says so)."""
    pairs: tuple[tuple[bytes, bytes], ...]
    """``(record bytes, transaction bytes)`` of each ``RecordStreamItem``."""
    block_number: int
    sidecars: tuple[SidecarMetadata, ...]
    ahead: list[ItemAhead] | None = None
    """What the unpacking process read of each item, when the layout holds it
    (``RecordStreamLayout.items_ahead``)."""


@dataclass(frozen=True, slots=True)
class RecordStreamLayout:
    """Where the fields of one serialized ``RecordStreamFile`` are (offsets into its bytes), read at the wire
    level only, so that it can be made away from the import's thread (``stream_unpacker``)."""

    header: dict[int, tuple[int, int]]
    """Fields 1 (HAPI version), 2 (start running hash) and 4 (end running hash): their value's span."""
    items: array[int]
    """Four offsets per ``RecordStreamItem``: its record's span, then its transaction's (0, 0 when absent)."""
    sidecars: tuple[tuple[int, int], ...]
    block_number: int
    ahead: ReadAhead | None = None
    """What the unpacking process read of the items (:func:`lay_out_v6`: ``items_read_ahead.read_ahead``), None
    when nothing was."""

    def pairs(self, content: bytes) -> list[tuple[bytes, bytes]]:
        """``(record bytes, transaction bytes)`` of each item."""
        spans = self.items
        return [
            (content[spans[at] : spans[at + 1]], content[spans[at + 2] : spans[at + 3]])
            for at in range(0, len(spans), 4)
        ]

    def items_ahead(self, content: bytes) -> list[ItemAhead] | None:
        """Each item's body bytes (None where not found), hbar transfers, head and approved debits; None when
        nothing was read ahead."""
        ahead = self.ahead
        if ahead is None:
            return None
        spans = ahead.bodies
        return [
            (content[spans[at] : spans[at + 1]] if spans[at + 1] else None, transfers, head, debits)
            for at, transfers, head, debits in zip(
                range(0, len(spans), 2), ahead.transfers, ahead.heads, ahead.approved_debits, strict=True
            )
        ]


def record_stream_layout(name: str, content: bytes, offset: int = 0) -> RecordStreamLayout:
    """The layout of a ``RecordStreamFile`` in ``content[offset:]``; raises :class:`StreamParseError` for bytes
    that are not one at the wire level."""
    header: dict[int, tuple[int, int]] = {}
    items: array[int] = array("q")
    sidecars: list[tuple[int, int]] = []
    block_number = 0
    for number, wire_type, start, end in protobuf_wire.scan_fields(content, offset, len(content), name):
        if number == 5 and wire_type == protobuf_wire.VARINT:
            block_number = to_signed64(protobuf_wire.read_varint(content, start, end, name)[0])
        elif wire_type != protobuf_wire.LENGTH_DELIMITED:
            continue
        elif number == _RECORD_STREAM_ITEMS:
            items.extend(_v6_item_spans(name, content, start, end))
        elif number == 6:
            sidecars.append((start, end))
        elif number in (1, 2, 4):
            header[number] = (start, end)
    return RecordStreamLayout(header, items, tuple(sidecars), block_number)


def start_hash_of(name: str, content: bytes, layout: RecordStreamLayout) -> bytes | None:
    """The start running hash's bytes as the wire has them (field 3 of the ``HashObject`` in header field 2),
    without the checks :func:`read_record_stream_contents` makes on them; None when there are none."""
    span = layout.header.get(2)
    if span is None:
        return None
    found = None
    for number, wire_type, start, end in protobuf_wire.scan_fields(content, span[0], span[1], name):
        if number == 3 and wire_type == protobuf_wire.LENGTH_DELIMITED:
            found = content[start:end]
    return found


def fold_items(name: str, content: bytes, layout: RecordStreamLayout) -> tuple[bytes, bytes] | None:
    """The running hash folded over the layout's items from the file's start hash: ``(start, end)``, or None
    when the start hash is not one (the file's own checks then say why)."""
    start = start_hash_of(name, content, layout)
    if start is None or len(start) != HASH_LENGTH:
        return None
    return start, running_hash(start, layout.pairs(content))


def lay_out_v6(name: str, content: bytes) -> tuple[RecordStreamLayout, tuple[bytes, bytes] | None] | None:
    """A v6 file's (decompressed ``content``) :func:`record_stream_layout`, with what its items give ahead
    (``items_read_ahead.read_ahead``), and :func:`fold_items`, or None when the wire-level reads refuse it
    (parsing it then refuses it with the whole file's checks). For the unpacking process: it parses every
    item's record and transaction."""
    try:
        layout = record_stream_layout(name, content, len(V6_HEADER))
        folded = fold_items(name, content, layout)
    except StreamParseError:
        return None
    return dataclasses.replace(layout, ahead=read_ahead(content, layout.items)), folded


def read_record_stream_contents(
    name: str,
    content: bytes,
    offset: int = 0,
    *,
    end_hash_required: bool = True,
    layout: RecordStreamLayout | None = None,
) -> RecordStreamContents:
    """A ``RecordStreamFile`` from ``content[offset:]`` (a v6 file's bytes after its version, or the contents of
    a wrapped record block's ``record_file`` item); ``layout``: its :func:`record_stream_layout`, made already."""
    if layout is None:
        layout = record_stream_layout(name, content, offset)
    modules = protos()
    header = {number: content[start:end] for number, (start, end) in layout.header.items()}
    sidecars = [_sidecar_metadata(name, modules, content[start:end]) for start, end in layout.sidecars]
    try:
        semantic = modules.basic_types.SemanticVersion.FromString(header.get(1, b""))
        start_hash = modules.hash_object.HashObject.FromString(header.get(2, b""))
        end_hash = modules.hash_object.HashObject.FromString(header.get(4, b""))
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad RecordStreamFile header: {error}") from error
    start_running = _running_hash_of(name, "start", start_hash)
    end_running = _running_hash_of(name, "end", end_hash) if end_hash_required or 4 in header else None
    return RecordStreamContents(
        hapi_version=SemanticVersion(semantic.major, semantic.minor, semantic.patch),
        start_running_hash=start_running,
        end_running_hash=end_running,
        pairs=tuple(layout.pairs(content)),
        block_number=layout.block_number,
        sidecars=tuple(sidecars),
        ahead=layout.items_ahead(content),
    )


def read_v6(
    name: str,
    content: bytes,
    size: int,
    content_hash: bytes | None = None,
    *,
    layout: RecordStreamLayout | None = None,
    folded: tuple[bytes, bytes] | None = None,
) -> RecordFile:
    """A v6 file: int32 6, then one ``RecordStreamFile`` (content is decompressed; ``content_hash``: its
    SHA-384, the file hash, ``layout`` its :func:`record_stream_layout` and ``folded`` its :func:`fold_items`,
    when made already)."""
    contents = read_record_stream_contents(name, content, 4, layout=layout)
    items = parse_items(name, contents.pairs, contents.ahead)
    hapi = contents.hapi_version
    start_running = contents.start_running_hash
    end_running = contents.end_running_hash
    assert end_running is not None
    block_number = contents.block_number
    metadata = hashlib.sha384(
        struct.pack(">iiii", 6, *hapi) + start_running + end_running + struct.pack(">q", block_number)
    ).digest()
    stamps = [item.consensus_timestamp for item in items]
    first, last = (min(stamps), max(stamps)) if stamps else (instant_of(name),) * 2
    return RecordFile(
        name=name,
        version=6,
        hapi_version=hapi,
        previous_hash=start_running,
        hash=end_running,
        file_hash=content_hash if content_hash is not None else hashlib.sha384(content).digest(),
        metadata_hash=metadata,
        block_number=block_number,
        items=tuple(items),
        sidecars=contents.sidecars,
        size=size,
        consensus_start=first,
        consensus_end=last,
        folded=folded,
    )


def read_stream_item(name: str, data: bytes) -> RecordItem:
    """One serialized ``RecordStreamItem`` (a wrapped record block's amendment) as an item."""
    return parse_items(name, [_v6_item_parts(name, data, 0, len(data))])[0]


def _v6_item_parts(name: str, content: bytes, start: int, end: int) -> tuple[bytes, bytes]:
    """The exact (record, transaction) bytes of one ``RecordStreamItem`` in ``content[start:end]``."""
    record_start, record_end, transaction_start, transaction_end = _v6_item_spans(name, content, start, end)
    return content[record_start:record_end], content[transaction_start:transaction_end]


def _v6_item_spans(name: str, content: bytes, start: int, end: int) -> tuple[int, int, int, int]:
    """Where the record's and the transaction's bytes of one ``RecordStreamItem`` in ``content[start:end]`` are
    (the transaction's ``0, 0`` when it has none)."""
    record: tuple[int, int] | None = None
    transaction: tuple[int, int] | None = None
    for number, wire_type, value_start, value_end in protobuf_wire.scan_fields(content, start, end, name):
        if number in (1, 2) and wire_type == protobuf_wire.LENGTH_DELIMITED:
            if (record if number == 2 else transaction) is not None:
                raise StreamParseError(name, f"record stream item repeats field {number}")
            if number == 2:
                record = (value_start, value_end)
            else:
                transaction = (value_start, value_end)
    if record is None:
        raise StreamParseError(name, "record stream item without a record")
    return (*record, *(transaction or (0, 0)))


def _sidecar_metadata(name: str, modules: Any, data: bytes) -> SidecarMetadata:
    try:
        entry = modules.record_stream_file.SidecarMetadata.FromString(data)
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad SidecarMetadata: {error}") from error
    digest = _running_hash_of(name, f"sidecar {entry.id}", entry.hash)
    return SidecarMetadata(id=entry.id, hash=digest, types=tuple(entry.types))


def _running_hash_of(name: str, what: str, hash_object: Any) -> bytes:
    if hash_object.algorithm != SHA_384:
        raise StreamParseError(name, f"unsupported {what} hash algorithm {hash_object.algorithm}")
    if len(hash_object.hash) != HASH_LENGTH:
        raise StreamParseError(name, f"{what} hash has {len(hash_object.hash)} bytes, not {HASH_LENGTH}")
    return bytes(hash_object.hash)
