"""An import stopped at random points (the task cancelled and its connection dropped, as a crash looks to the
database) and restarted ends with exactly the tables of an uninterrupted run. The stream spans 40 minutes of
consensus time, so the run writes balance snapshots (a full one, then a deduplicated one): no restart leaves half
a snapshot or adds a second one."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import asyncpg
import pytest
from tests.importer import signed_streams, stream_writer
from tests.importer.importing import table_counts
from tests.support import Ledger

from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats, LogProgress
from ledgermirror.importer.sources import open_store
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

FILES = 200
ITEMS_PER_FILE = 4
START = 1_710_000_000 * 1_000_000_000
SPACING = 12_000_000_000
"""Record files 12 s apart: 200 of them span 40 minutes, two balance snapshots."""
INTERRUPTIONS = 20
KILLS = 3
_TABLES = (
    "select tablename from pg_tables where schemaname = 'public' and tablename <> 'ledgermirror_schema_history'"
)
_COLUMNS = "select column_name from information_schema.columns where table_name = $1 order by 1"
_DIGEST = "select md5(coalesce(string_agg(r::text, '|' order by r::text), '')) from (select {} from \"{}\") r"
_WALL_CLOCK_COLUMNS = {
    "record_file": ("load_start", "load_end"),
    "account_balance_file": ("load_start", "load_end"),
    "signature_evidence": ("imported_at",),
}


def _write_stream(root: Path) -> Path:
    keys = signed_streams.node_keys(4)
    (root / "book.bin").write_bytes(stream_writer.address_book(keys))
    running = signed_streams.GENESIS_HASH
    for number in range(FILES):
        first = START + number * SPACING
        items = [
            signed_streams.file_update(first + index, 1000 + (number + index) % 7, f"{number}.{index}".encode())
            for index in range(ITEMS_PER_FILE)
        ]
        running = signed_streams.write_file(root / "streams", first, items, running, number + 1, keys=keys)
    return root


async def _digest(url: str, skip: Mapping[str, tuple[str, ...]] = _WALL_CLOCK_COLUMNS) -> dict[str, str]:
    """Every table's content (the ``skip`` columns, by default the wall clock's, left out) as one md5 per table."""
    conn = await asyncpg.connect(url)
    try:
        digests = {}
        for (name,) in await conn.fetch(_TABLES):
            columns = [
                row["column_name"]
                for row in await conn.fetch(_COLUMNS, name)
                if row["column_name"] not in skip.get(name, ())
            ]
            listed = ", ".join(f'"{column}"' for column in columns)
            digests[name] = await conn.fetchval(_DIGEST.format(listed, name))
        return digests
    finally:
        await conn.close()


async def _count(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("select count(*) from record_file"))
    finally:
        await conn.close()


class _Commits(LogProgress):
    """Progress that also signals each committed transaction."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def committed(self, stats: ImportStats) -> None:
        self.event.set()


async def _import(
    url: str,
    root: Path,
    *,
    cancel_after: float | None = None,
    after_first_commit: bool = False,
    overlap: bool = False,
) -> bool:
    """One run; with ``cancel_after`` it is cancelled that many seconds after its start (or after its first
    commit) and its connection dropped. True when it finished first."""
    conn = await asyncpg.connect(url)
    options = ImportOptions(once=True, address_book=root / "book.bin", files_per_transaction=3, overlap=overlap)
    commits = _Commits()
    task = asyncio.create_task(run_import(conn, open_store(str(root / "streams")), options, progress=commits))
    try:
        if after_first_commit:
            waiting = asyncio.create_task(commits.event.wait())
            await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
        await asyncio.wait_for(asyncio.shield(task), cancel_after)
        return True
    except TimeoutError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return False
    finally:
        conn.terminate()


@pytest.mark.parametrize("overlap", [False, True], ids=["sequential", "overlapped"])
def test_interrupted_imports_end_with_the_tables_of_one_run(
    database: Prepared, ledger: Ledger, tmp_path: Path, overlap: bool
) -> None:
    root = _write_stream(tmp_path)
    url = database.owner_url

    async def scenario() -> tuple[dict[str, str], dict[str, str], int]:
        clock = asyncio.get_running_loop().time
        started = clock()
        assert await _import(url, root)
        duration = clock() - started
        expected = await _digest(url)
        started = clock()
        assert await _import(url, root)  # nothing left: the time a run takes before its first file
        overhead = clock() - started
        await asyncio.to_thread(ledger.reset)
        chance = random.Random(12)
        interrupted = 0
        while interrupted < INTERRUPTIONS:
            # odd runs: a random time from the start (often in the first transaction); even runs: a random
            # time after their first commit (so the stream advances under interruptions)
            after_commit = interrupted % 2 == 1
            spread = max(duration - overhead, 0.0) / (60 if after_commit else 40)
            cancel_after = chance.uniform(0.0, spread) + (0.0 if after_commit else overhead)
            finished = await _import(
                url, root, cancel_after=cancel_after, after_first_commit=after_commit, overlap=overlap
            )
            assert not finished, "the stream was imported before the interruptions were done: make it longer"
            interrupted += 1
        progress = await _count(url)
        assert await _import(url, root, overlap=overlap)
        return expected, await _digest(url), progress

    expected, resumed, progress = asyncio.run(scenario())
    assert 0 < progress < FILES  # the interrupted runs committed part of the stream
    assert resumed == expected
    counts = table_counts(url)
    assert counts["record_file"] == FILES
    assert counts["account_balance_file"] == 2


def test_killed_importer_processes_resume_to_the_same_tables(
    database: Prepared, ledger: Ledger, tmp_path: Path
) -> None:
    """The same with ``ledgermirror import`` processes killed with SIGKILL a moment after a commit."""
    root = _write_stream(tmp_path)
    url = database.owner_url
    assert asyncio.run(_import(url, root))
    expected = asyncio.run(_digest(url))
    ledger.reset()
    environment = {**os.environ, "LEDGERMIRROR_DB_URL": url, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "ledgermirror", "import", "--source", str(root / "streams")]
    command += ["--address-book", str(root / "book.bin"), "--once", "--files-per-transaction", "3"]
    chance = random.Random(5)
    kills = 0
    for _ in range(KILLS):
        before = asyncio.run(_count(url))
        process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while asyncio.run(_count(url)) == before and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(chance.uniform(0.0, 0.1))
        if process.poll() is None:
            process.kill()
            kills += 1
        process.wait(timeout=30)
    assert kills >= 1
    assert table_counts(url).get("account_balance_file", 0) <= 2
    done = subprocess.run(command, env=environment, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert asyncio.run(_digest(url)) == expected
