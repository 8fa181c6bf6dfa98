"""A folder of block files, by block number: what the simulated block node serves.

Files are found anywhere below the folder in either naming of the reference: one file per block named by its
number, 19 digits, flat (``0000000000000000007.blk.zstd``) or with a ``/`` after every 4 digits
(``0000/0000/0000/0000/007.blk.zstd``, the bucket layout); ``.blk`` files are read as they are, ``.blk.zstd``
files decompressed. The index is rebuilt on demand, so a folder that grows (a simulator still writing) is seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from ledgermirror.blocknode.wire import Availability

_SUFFIXES = (".blk.zstd", ".blk")
_NUMBER_DIGITS = 19


def block_number_of(path: Path) -> int | None:
    """The block number a file's name (and its all-digit parent folders) spells, or None for another file."""
    name = path.name
    suffix = next((suffix for suffix in _SUFFIXES if name.endswith(suffix)), None)
    if suffix is None:
        return None
    digits = name[: -len(suffix)]
    parent = path.parent
    while len(digits) < _NUMBER_DIGITS and parent.name.isdigit():
        digits = parent.name + digits
        parent = parent.parent
    if len(digits) != _NUMBER_DIGITS or not digits.isdigit():
        return None
    return int(digits)


@dataclass(slots=True)
class BlockFolder:
    root: Path
    _paths: dict[int, Path] = field(default_factory=dict)

    def rescan(self) -> None:
        """Index every block file below the folder (a file seen before keeps its path)."""
        for path in self.root.rglob("*.blk*"):
            number = block_number_of(path)
            if number is not None and number not in self._paths and path.is_file():
                self._paths[number] = path

    def availability(self) -> Availability:
        """The first block and the last one of the unbroken run that follows it (``first > last``: none)."""
        if not self._paths:
            return Availability(1, 0)
        first = min(self._paths)
        last = first
        while last + 1 in self._paths:
            last += 1
        return Availability(first, last)

    def has(self, number: int) -> bool:
        return number in self._paths

    def read(self, number: int) -> bytes:
        """The serialized ``Block`` of a block the index holds."""
        path = self._paths[number]
        data = path.read_bytes()
        if path.name.endswith(".zstd"):
            return zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 30)
        return data
