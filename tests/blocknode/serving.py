"""Test blocks and a block node on 127.0.0.1 for the block node tests."""

from __future__ import annotations

from pathlib import Path

import zstandard
from hiero_sdk_python.hapi.block.stream import block_item_pb2, block_pb2
from tests.importer.fixtures import STREAMS

from ledgermirror.blocknode.folder import BlockFolder

FIXTURES = STREAMS / "data" / "blockstreams"
"""The reference's block fixtures (blocks 7, 8 and 16) in the bucket layout."""


def synthetic_block(number: int, filler: int = 3, filler_size: int = 100) -> bytes:
    """A serialized Block: a header with its number, then ``filler`` items (not a chain the importer would
    accept: the transport tests check numbers and bytes only)."""
    block = block_pb2.Block()
    header = block.items.add()
    header.block_header.number = number
    header.block_header.block_timestamp.seconds = 1_700_000_000 + number
    for index in range(filler):
        item = block.items.add()
        item.signed_transaction = bytes([number % 256, index % 256]) * (filler_size // 2)
    return block.SerializeToString()


def write_blocks(
    root: Path, numbers: range, *, layout: str = "bucket", compress: bool = True, **kwargs: int
) -> None:
    for number in numbers:
        digits = f"{number:019d}"
        data = synthetic_block(number, **kwargs)
        suffix = ".blk.zstd" if compress else ".blk"
        if compress:
            data = zstandard.ZstdCompressor().compress(data)
        if layout == "bucket":
            path = root / digits[0:4] / digits[4:8] / digits[8:12] / digits[12:16] / (digits[16:] + suffix)
        else:
            path = root / (digits + suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def header_number(item: block_item_pb2.BlockItem) -> int:
    return int(item.block_header.number)


class TrippingFolder(BlockFolder):
    """A folder that calls ``trip`` once, when block ``at`` is read (the test stops the server there)."""

    def __init__(self, root: Path, at: int, trip: object) -> None:
        super().__init__(root)
        self.at = at
        self.trip = trip

    def read(self, number: int) -> bytes:
        if number == self.at and self.trip is not None:
            trip, self.trip = self.trip, None
            trip()  # type: ignore[operator]
        return super().read(number)
