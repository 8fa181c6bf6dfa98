"""Where blocks come from: the transport interface the block pipeline consumes, and its file implementation.

A :class:`BlockSource` yields :class:`SourceBlock` s (a block number and the uncompressed bytes of a serialized
``com.hedera.hapi.block.stream.Block``) in increasing number from a given start. Nothing it yields is trusted:
the pipeline checks the header's number, the hash chain and the proof before anything is written.

:class:`FileBlockSource` reads the reference's block bucket layout through a :class:`~.sources.Store` (a
folder, or an ``s3://`` / ``gs://`` bucket): ``<root>/`` + the block number zero-padded to 19 digits with a
``/`` after every 4 digits + ``.blk.zstd`` (zstd) or ``.blk`` (block 7 is
``0000/0000/0000/0000/007.blk.zstd``). The root is the source itself or a ``block`` / ``blockstreams``
folder found within a few levels of it. Since a block's name follows from its number, the next block is read
by name; only the first block of an empty database is found by listing (the lowest folder at each level).

A ``grpc://host:port`` source is a block node (``importer/block_node.py``; ``cutover.open_block_source`` opens
either).
"""

from __future__ import annotations

import asyncio
import collections
import re
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Protocol

import zstandard

from ledgermirror.importer import protobuf_wire
from ledgermirror.importer.block_file import BlockDigest, digest_block, read_block
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.sources import Store

COMPRESSED_SUFFIX = ".blk.zstd"
PLAIN_SUFFIX = ".blk"
BLOCK_ROOT_FOLDERS = ("block", "blockstreams")
_DIGITS = 19
_GROUP = re.compile(r"^\d{4}$")
_BLOCK_NAME = re.compile(r"^(\d{3})\.blk(\.zstd)?$")
_ROOT_DEPTH = 3
_FOLDER_FILES = 2000
"""A leaf folder holds at most 1000 blocks (three digits), each as ``.blk.zstd`` or ``.blk``."""
_MAX_FRAME = 1 << 30
"""The largest block we decompress (1 GiB): a bound against a decompression bomb (read in chunks, so a frame
without a stated size costs no more memory than its content)."""
_CHUNK = 1 << 20
PREFETCH_GROWTH = 8
"""How far the read-ahead limit may grow: up to this many times ``prefetch``."""


@dataclass(frozen=True, slots=True)
class SourceBlock:
    number: int
    """The block number the source claims (checked against the block header)."""
    name: str
    """The file name (``0000000000000000007.blk.zstd``); a block node gives ``f"{number:019d}.blk"``."""
    data: bytes
    """A serialized ``Block``, uncompressed."""
    size: int
    """Bytes as delivered (the compressed file's size)."""
    digest: BlockDigest | None = None
    """What verifying it computes from its bytes alone, when computed ahead (``block_file.digest_block``)."""


class BlockUnpacker(Protocol):
    """Unpacks a block file as delivered elsewhere than on the import's thread (``stream_unpacker``)."""

    async def unpack_block(self, name: str, data: bytes) -> tuple[bytes, BlockDigest | None]:
        """:func:`unpack_block_file`'s answer; raises as :func:`decompress` does."""
        ...


class BlockSource(Protocol):
    """Blocks in order from a number (docs/importer.md, "Block streams")."""

    description: str

    def blocks(self, start: int | None, unpacker: BlockUnpacker | None = None) -> AsyncIterator[SourceBlock]:
        """Blocks in increasing number from ``start`` (``None``: the first the source has). The iterator may end
        when nothing more is available now (the pipeline waits and asks again from the next number) or run
        forever; after a refused block the pipeline asks again from the same number. ``unpacker``, when given,
        may unpack the blocks read ahead (a source that has nothing to unpack ignores it)."""
        ...

    async def close(self) -> None: ...


def block_name(number: int, compressed: bool = True) -> str:
    return f"{number:0{_DIGITS}d}" + (COMPRESSED_SUFFIX if compressed else PLAIN_SUFFIX)


def block_key(number: int, compressed: bool = True) -> str:
    """The key of block ``number`` below the block root: a ``/`` after every 4 digits of its 19-digit name."""
    digits = f"{number:0{_DIGITS}d}"
    folders = "/".join(digits[i : i + 4] for i in range(0, 16, 4))
    return f"{folders}/{digits[16:]}" + (COMPRESSED_SUFFIX if compressed else PLAIN_SUFFIX)


def block_bytes(items: Iterable[bytes]) -> bytes:
    """A serialized ``Block`` from the exact bytes of its ``BlockItem`` s (each as field 1)."""
    parts: list[bytes] = []
    for item in items:
        parts.append(protobuf_wire.message_field(1, item))
    return b"".join(parts)


def decompress(name: str, data: bytes) -> bytes:
    """The serialized ``Block`` of a file: zstd for ``.zstd`` names, as is otherwise."""
    if not name.endswith(".zstd"):
        return data
    try:
        size = zstandard.frame_content_size(data)
        if size > _MAX_FRAME:
            raise StreamParseError(name, f"decompresses to {size} bytes, more than {_MAX_FRAME}")
        if size >= 0:
            return zstandard.ZstdDecompressor().decompress(data)
        return _decompress_unsized(name, data)
    except zstandard.ZstdError as error:
        raise StreamParseError(name, f"zstd: {error}") from error


def unpack_block_file(name: str, data: bytes) -> tuple[bytes, BlockDigest]:
    """A block file as delivered, decompressed, and the :class:`~.block_file.BlockDigest` of its content: the
    work of reading and verifying a block that needs neither the protobuf classes nor the address book, for the
    unpacking process. Raises :class:`StreamParseError` as :func:`decompress` and the wire reads do."""
    content = decompress(name, data)
    return content, digest_block(name, content)


def _decompress_unsized(name: str, data: bytes) -> bytes:
    """A frame that does not state its size: read in chunks up to the bound, then checked complete."""
    total = 0
    with zstandard.ZstdDecompressor().stream_reader(data) as reader:
        while chunk := reader.read(_CHUNK):
            total += len(chunk)
            if total > _MAX_FRAME:
                raise StreamParseError(name, f"decompresses to more than {_MAX_FRAME} bytes")
    whole = zstandard.ZstdDecompressor().decompressobj()
    content = whole.decompress(data)
    if not whole.eof:
        raise StreamParseError(name, "zstd: truncated frame")
    return content


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


async def find_block_root(store: Store) -> str | None:
    """The key prefix holding the block tree (``""`` for the source itself), or ``None`` when there is none."""
    level = [""]
    for _depth in range(_ROOT_DEPTH + 1):
        following: list[str] = []
        for prefix in level:
            names = await store.folders(prefix)
            if any(_GROUP.match(name) for name in names) and (
                prefix == "" or prefix.rsplit("/", 1)[-1] in BLOCK_ROOT_FOLDERS
            ):
                return prefix
            following.extend(_join(prefix, name) for name in names if not _GROUP.match(name))
        level = following
        if not level:
            break
    return None


class FileBlockSource:
    """Block files in the reference's bucket layout, read through a :class:`Store`."""

    def __init__(self, store: Store, prefetch: int = 8) -> None:
        self.store = store
        self.prefetch = max(1, prefetch)
        self.description = str(store)
        self._root: str | None = None

    async def root(self) -> str | None:
        if self._root is None:
            self._root = await find_block_root(self.store)
        return self._root

    async def first_number(self) -> int | None:
        """The lowest block number present (the lowest folder at each level, then the lowest file)."""
        root = await self.root()
        if root is None:
            return None
        prefix = root
        digits = ""
        for _level in range(4):
            groups = [name for name in await self.store.folders(prefix) if _GROUP.match(name)]
            if not groups:
                return None
            group = min(groups)
            digits += group
            prefix = _join(prefix, group)
        names = await self.store.names_after(prefix, None, ".blk.zstd", 1)
        names += await self.store.names_after(prefix, None, ".blk", 1)
        numbers = [match.group(1) for match in map(_BLOCK_NAME.match, names) if match]
        return int(digits + min(numbers)) if numbers else None

    async def last_number(self) -> int | None:
        """The highest block number present (the highest folder at each level, then the highest file)."""
        root = await self.root()
        if root is None:
            return None
        prefix, digits = root, ""
        for _level in range(4):
            groups = [name for name in await self.store.folders(prefix) if _GROUP.match(name)]
            if not groups:
                return None
            digits += max(groups)
            prefix = _join(prefix, max(groups))
        names = await self.store.names_after(prefix, None, "", _FOLDER_FILES)
        numbers = [match.group(1) for match in map(_BLOCK_NAME.match, names) if match]
        return int(digits + max(numbers)) if numbers else None

    async def number_at(self, instant: int) -> int | None:
        """The first block whose header's timestamp is at or after ``instant`` (nanoseconds), found by a
        binary search over the numbers present (block times increase with the number); None if none is."""
        low, high = await self.first_number(), await self.last_number()
        if low is None or high is None:
            return None
        found = None
        while low <= high:
            middle = (low + high) // 2
            block = await self.read(middle)
            if block is None:  # a hole in the listing: look below it
                high = middle - 1
                continue
            if read_block(block.name, block.data, block.size).timestamp >= instant:
                found, high = middle, middle - 1
            else:
                low = middle + 1
        return found

    async def read(self, number: int, unpacker: BlockUnpacker | None = None) -> SourceBlock | None:
        """Block ``number`` (``.blk.zstd``, else ``.blk``), or ``None`` when the source does not hold it yet;
        unpacked by ``unpacker`` when given, with its digest."""
        root = await self.root()
        if root is None:
            return None
        for compressed in (True, False):
            data = await self.store.read(_join(root, block_key(number, compressed)))
            if data is not None:
                name = block_name(number, compressed)
                if unpacker is None:
                    return SourceBlock(number, name, decompress(name, data), len(data))
                content, digest = await unpacker.unpack_block(name, data)
                return SourceBlock(number, name, content, len(data), digest)
        return None

    async def _timed_read(self, number: int, unpacker: BlockUnpacker | None) -> tuple[SourceBlock | None, float]:
        started = time.perf_counter()
        block = await self.read(number, unpacker)
        return block, time.perf_counter() - started

    async def blocks(self, start: int | None, unpacker: BlockUnpacker | None = None) -> AsyncIterator[SourceBlock]:
        """Blocks from ``start`` read by name, up to ``prefetch`` ahead (the window starts at one and doubles
        while blocks keep coming, so a poll at the head of the stream costs one read). When a read the import
        waited for took longer than the window covers (above the limit times the import's own time per block:
        a distant bucket), the limit doubles, up to ``PREFETCH_GROWTH`` times ``prefetch``; a source slow for
        want of CPU (a server on the same cores) keeps its limit, as more reads at once would not help it.
        ``unpacker``, when given, unpacks each block as it is read (:meth:`read`)."""
        number = start if start is not None else await self.first_number()
        if number is None:
            return
        window: collections.deque[asyncio.Task[tuple[SourceBlock | None, float]]] = collections.deque()
        width, limit = 1, self.prefetch
        busy: float | None = None
        expected = number  # the store was told of the blocks before this one
        try:
            while True:
                while len(window) < width:
                    window.append(asyncio.ensure_future(self._timed_read(number + len(window), unpacker)))
                expected = await self._expect(max(expected, number + len(window)), number + len(window) + width)
                head = window.popleft()
                waited = not head.done()
                block, took = await head
                if waited and busy is not None and width >= limit and took > limit * busy:
                    limit = min(limit * 2, self.prefetch * PREFETCH_GROWTH)
                if block is None:
                    return
                handed = time.perf_counter()
                yield block
                busy = time.perf_counter() - handed  # the import's own time for the block
                number += 1
                width = min(width * 2, limit)
        finally:
            for task in window:
                task.cancel()

    async def _expect(self, first: int, end: int) -> int:
        """Tell the store that blocks ``first`` to ``end`` (excluded) will be read next, under either name (a
        local folder then reads them from the disk before the import blocks on them). Returns the number of
        the first block it was not told of."""
        root = await self.root()
        if root is not None and first < end:
            self.store.expect(
                _join(root, block_key(number, compressed))
                for number in range(first, end)
                for compressed in (True, False)
            )
        return max(first, end)

    async def close(self) -> None:
        return None
