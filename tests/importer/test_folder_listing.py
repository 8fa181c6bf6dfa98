"""A local folder's names scanned once for several pages while it does not change (``importer/folder_listing.py``),
and a local store's listing and reads over day folders and the root (``sources.LocalStore``), on real folders."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from ledgermirror.importer.folder_listing import KEPT_PAGES, SETTLED_NS, FolderListings
from ledgermirror.importer.sources import LocalStore

SUFFIX = ".rcd_sig"
PAGE = 100


def folder_of(path: Path, count: int) -> list[str]:
    """``count`` signature files (and others the listing leaves out); their names, sorted."""
    path.mkdir(parents=True)
    names = [f"2026-01-01T00_{n // 60:02d}_{n % 60:02d}.000000000Z{SUFFIX}" for n in range(count)]
    for name in names:
        (path / name).write_bytes(b"s")
        (path / name.replace(SUFFIX, ".rcd.gz")).write_bytes(b"d")
    (path / f"z-a-folder{SUFFIX}").mkdir()  # a folder with the suffix is no file
    return names


def settle(path: Path) -> int:
    """Make the folder look unchanged for longer than the settling time; its new modification time."""
    earlier = time.time_ns() - 2 * SETTLED_NS
    os.utime(path, ns=(earlier, earlier))
    return earlier


def pages(listings: FolderListings, folder: Path, limit: int = PAGE) -> list[str]:
    listed: list[str] = []
    while page := listings.names_after(str(folder), listed[-1] if listed else None, SUFFIX, limit):
        listed += page
    return listed


def test_a_settled_folder_is_scanned_once_for_its_next_pages(tmp_path: Path) -> None:
    names = folder_of(tmp_path / "node", 2_500)
    settle(tmp_path / "node")
    listings = FolderListings()
    assert pages(listings, tmp_path / "node") == names
    kept = PAGE * KEPT_PAGES
    assert listings.scans == -(-len(names) // kept)  # 3: one scan for every KEPT_PAGES pages


def test_a_folder_changed_within_the_settling_time_is_scanned_for_every_page(tmp_path: Path) -> None:
    names = folder_of(tmp_path / "node", 250)
    listings = FolderListings()
    assert pages(listings, tmp_path / "node") == names
    assert listings.scans == 4  # three pages and the empty one after them


def test_a_file_added_to_a_settled_folder_is_listed_at_the_next_call(tmp_path: Path) -> None:
    names = folder_of(tmp_path / "node", 30)
    settle(tmp_path / "node")
    listings = FolderListings()
    assert listings.names_after(str(tmp_path / "node"), None, SUFFIX, PAGE) == names
    added = f"2026-01-01T01_00_00.000000000Z{SUFFIX}"
    (tmp_path / "node" / added).write_bytes(b"s")  # the folder's modification time moves
    assert listings.names_after(str(tmp_path / "node"), names[-1], SUFFIX, PAGE) == [added]
    assert listings.scans == 2


def test_a_file_added_in_the_same_tick_as_an_unsettled_scan_is_listed_next_time(tmp_path: Path) -> None:
    """Why only a settled folder is kept: an entry added in the clock tick of the scan leaves the folder's
    modification time as it was (here put back by hand), and only a new scan sees it."""
    names = folder_of(tmp_path / "node", 5)
    stamp = os.stat(tmp_path / "node").st_mtime_ns
    listings = FolderListings()
    assert listings.names_after(str(tmp_path / "node"), None, SUFFIX, PAGE) == names
    added = f"2026-01-01T01_00_00.000000000Z{SUFFIX}"
    (tmp_path / "node" / added).write_bytes(b"s")
    os.utime(tmp_path / "node", ns=(stamp, stamp))
    assert listings.names_after(str(tmp_path / "node"), None, SUFFIX, PAGE) == [*names, added]


def test_a_page_asked_before_the_kept_names_or_longer_than_them_is_scanned_again(tmp_path: Path) -> None:
    names = folder_of(tmp_path / "node", 300)
    settle(tmp_path / "node")
    listings = FolderListings()
    assert listings.names_after(str(tmp_path / "node"), names[99], SUFFIX, 10) == names[100:110]
    assert listings.names_after(str(tmp_path / "node"), names[150], SUFFIX, 10) == names[151:161]
    assert listings.scans == 1
    assert listings.names_after(str(tmp_path / "node"), names[50], SUFFIX, 10) == names[51:61]  # before them
    assert listings.scans == 2
    assert listings.names_after(str(tmp_path / "node"), names[50], SUFFIX, 200) == names[51:251]  # beyond them
    assert listings.scans == 3


def test_a_missing_folder_lists_nothing(tmp_path: Path) -> None:
    listings = FolderListings()
    assert listings.names_after(str(tmp_path / "absent"), None, SUFFIX, PAGE) == []
    (tmp_path / "a-file").write_bytes(b"x")
    assert listings.names_after(str(tmp_path / "a-file"), None, SUFFIX, PAGE) == []


def test_a_store_lists_the_day_folders_from_the_cursor_s_day_and_the_root(tmp_path: Path) -> None:
    """The two day folders from the cursor's day on and the root, merged in order (the reference's "current and
    next day"); a file is read from its day folder, else from the root."""
    node = "recordstreams/record0.0.3"
    for day, stamps in {
        "2026-01-01": ("23_59_58",),
        "2026-01-02": ("00_00_02",),
        "2026-01-03": ("00_00_04",),
    }.items():
        for stamp in stamps:
            path = tmp_path / day / node / f"{day}T{stamp}.000000000Z{SUFFIX}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(day.encode())
    (tmp_path / node).mkdir(parents=True)
    (tmp_path / node / f"2026-01-02T00_00_01.000000000Z{SUFFIX}").write_bytes(b"root")
    store = LocalStore(tmp_path)

    async def run() -> tuple[list[str], list[str], bytes | None, bytes | None, bytes | None]:
        first = await store.names_after(node, f"2026-01-01T23_59_57.000000000Z{SUFFIX}", SUFFIX, 10)
        later = await store.names_after(node, f"2026-01-02T00_00_01.000000000Z{SUFFIX}", SUFFIX, 10)
        return (
            first,
            later,
            await store.read(f"{node}/2026-01-03T00_00_04.000000000Z{SUFFIX}"),
            await store.read(f"{node}/2026-01-02T00_00_01.000000000Z{SUFFIX}"),
            await store.read(f"{node}/2026-01-02T00_00_09.000000000Z{SUFFIX}"),
        )

    first, later, in_day, in_root, absent = asyncio.run(run())
    assert first == [
        f"2026-01-01T23_59_58.000000000Z{SUFFIX}",
        f"2026-01-02T00_00_01.000000000Z{SUFFIX}",
        f"2026-01-02T00_00_02.000000000Z{SUFFIX}",
    ]  # the third day is not among the first two
    assert later == [f"2026-01-02T00_00_02.000000000Z{SUFFIX}", f"2026-01-03T00_00_04.000000000Z{SUFFIX}"]
    assert (in_day, in_root, absent) == (b"2026-01-03", b"root", None)
    assert store.requests.gets == 3 and store.requests.bytes_read == len(b"2026-01-03root")
