"""The record path's downloads ahead (``downloader.Prefetcher``): the window grows while the import waits for
downloads with every one running (a distant bucket), and stays put when the import is the slower side. The
store is the reference's fixtures in a folder with a delay before every request (``bench/_import.py``'s
``Slowed``, as ``bench/import --latency-ms`` uses it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench._import import Slowed
from tests.importer.fixtures import FIRST, SECOND
from tests.importer.importing import copy_streams

from ledgermirror.importer.downloader import PREFETCH_GROWTH, Candidate, Prefetcher, VerificationCost
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.sources import LocalStore, NodeFolder, discover_nodes

WINDOW = 4
FILES = 40


def _candidates(folders: tuple[NodeFolder, ...]) -> list[Candidate]:
    names = [f"{stamp}.rcd_sig" for stamp in (FIRST, SECOND)]
    return [Candidate(names[index % 2], folders) for index in range(FILES)]


async def _take_all(store: Slowed, pause: float) -> tuple[list[int], int]:
    folders = tuple(await discover_nodes(store))
    cost = VerificationCost()
    prefetcher = Prefetcher(store, _candidates(folders), WINDOW, cost)
    windows, taken = [], 0
    try:
        while prefetcher:
            fetched = await prefetcher.next()
            assert isinstance(fetched.record, RecordFile)
            assert fetched.record.name.startswith((FIRST, SECOND))
            taken += 1
            windows.append(prefetcher.window)
            await asyncio.sleep(pause)
    finally:
        prefetcher.close()
    return windows, taken


def test_the_window_grows_while_the_import_waits_for_downloads(tmp_path: Path) -> None:
    store = Slowed(LocalStore(copy_streams(tmp_path / "streams")), 0.02)
    windows, taken = asyncio.run(_take_all(store, 0.0))
    assert taken == FILES
    assert windows[0] == WINDOW  # the first wait is the window's start
    assert max(windows) == WINDOW * PREFETCH_GROWTH  # doubled each time it was behind, up to its bound
    assert windows == sorted(windows)


def test_the_window_stays_when_the_import_is_slower(tmp_path: Path) -> None:
    store = Slowed(LocalStore(copy_streams(tmp_path / "streams")), 0.0)
    windows, taken = asyncio.run(_take_all(store, 0.02))
    assert taken == FILES
    assert set(windows) == {WINDOW}
