"""Reading ahead from a local folder: the downloads to come tell the store what they will read
(``Store.expect``), and a folder asks the kernel to read those files into its page cache, so that a read from
the disk does not stop the import's thread (docs/importer.md, "Reading ahead")."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import mmap
import os
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.importer.fixtures import FIRST, SECOND, STREAMS
from tests.importer.importing import copy_streams

from ledgermirror.importer.block_source import FileBlockSource, block_key
from ledgermirror.importer.downloader import Candidate, Prefetcher, VerificationCost
from ledgermirror.importer.sources import LocalStore, discover_nodes
from ledgermirror.importer.stream_names import data_name_of_signature

_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_LIBC.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_LIBC.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
_MAP_FAILED = ctypes.c_void_p(-1).value


def resident_pages(path: Path) -> tuple[int, int]:
    """``(pages in the page cache, pages)`` of the file (``mincore`` over a mapping that touches none)."""
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    descriptor = os.open(path, os.O_RDONLY)
    try:
        address = _LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, descriptor, 0)
        assert address != _MAP_FAILED, os.strerror(ctypes.get_errno())
        try:
            vector = ctypes.create_string_buffer(pages)
            assert _LIBC.mincore(address, size, vector) == 0, os.strerror(ctypes.get_errno())
            return sum(byte & 1 for byte in vector.raw), pages
        finally:
            _LIBC.munmap(address, size)
    finally:
        os.close(descriptor)


def evict(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


class RecordingStore(LocalStore):
    """A folder that keeps the order of what it was told to expect and what it read."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.events: list[tuple[str, str]] = []

    def expect(self, keys: Iterable[str]) -> None:
        listed = list(keys)
        self.events.extend(("expect", key) for key in listed)
        super().expect(listed)

    async def read(self, key: str) -> bytes | None:
        self.events.append(("read", key))
        return await super().read(key)

    def first(self, kind: str, key: str) -> int:
        return self.events.index((kind, key))


def test_a_folder_has_the_files_it_expects_read_into_the_page_cache(tmp_path: Path) -> None:
    day = tmp_path / "2026-01-01"
    day.mkdir()
    files = {
        "a.rcd.gz": tmp_path / "a.rcd.gz",
        "2026-01-01T00_00_02.000000000Z.rcd.gz": day / "2026-01-01T00_00_02.000000000Z.rcd.gz",
    }
    for path in files.values():
        path.write_bytes(os.urandom(4 << 20))
        evict(path)
        if resident_pages(path)[0]:
            pytest.skip("this filesystem keeps the file's pages in memory (tmpfs): nothing to read ahead")
    store = LocalStore(tmp_path)
    store.expect([*files, "missing.rcd.gz", "2026-01-01T00_00_04.000000000Z.rcd.gz"])  # missing: no error
    deadline = time.monotonic() + 10
    while any(resident_pages(path)[0] < resident_pages(path)[1] for path in files.values()):
        assert time.monotonic() < deadline, {name: resident_pages(path) for name, path in files.items()}
        time.sleep(0.01)
    assert store.requests.gets == 0  # a hint is not a request
    assert store.requests.bytes_read == 0


def test_the_prefetcher_tells_the_store_what_the_next_downloads_read(tmp_path: Path) -> None:
    store = RecordingStore(copy_streams(tmp_path / "streams"))

    async def take_all() -> list[str]:
        folders = tuple(await discover_nodes(store))
        candidates = [Candidate(f"{stamp}.rcd_sig", folders) for stamp in (FIRST, SECOND)]
        prefetcher = Prefetcher(store, candidates, 1, VerificationCost())
        taken = []
        try:
            while prefetcher:
                fetched = await prefetcher.next()
                assert fetched.record is not None
                taken.append(fetched.candidate.signature_name)
        finally:
            prefetcher.close()
        return taken

    assert asyncio.run(take_all()) == [f"{FIRST}.rcd_sig", f"{SECOND}.rcd_sig"]
    folders = sorted({key.rsplit("/", 1)[0] for kind, key in store.events if key.endswith(".rcd_sig")})
    assert len(folders) == 4
    # the first file's download starts at once; the second one's files were expected before it read any
    second_signatures = [f"{folder}/{SECOND}.rcd_sig" for folder in folders]
    second_data = f"{folders[0]}/{data_name_of_signature(f'{SECOND}.rcd_sig', 6)}"
    for key in [*second_signatures, second_data]:
        assert store.first("expect", key) < store.first("read", key), key
    first_reads = [store.first("read", f"{folder}/{FIRST}.rcd_sig") for folder in folders]
    assert max(first_reads) < min(store.first("read", key) for key in second_signatures)
    # nothing of the first file was expected: it is read right away
    assert ("expect", f"{folders[0]}/{FIRST}.rcd_sig") not in store.events


def test_the_block_source_tells_the_store_which_blocks_come_next() -> None:
    store = RecordingStore(STREAMS / "data")

    async def read_all() -> list[int]:
        source = FileBlockSource(store)
        return [block.number async for block in source.blocks(None)]

    assert asyncio.run(read_all()) == [7, 8]
    root = "blockstreams"
    eight = f"{root}/{block_key(8)}"
    assert store.first("expect", eight) < store.first("read", eight)
    assert ("expect", f"{root}/{block_key(8, compressed=False)}") in store.events
    assert ("expect", f"{root}/{block_key(7)}") not in store.events  # the first block is read at once
