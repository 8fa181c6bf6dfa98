"""The database's disk filling up during an import: a cluster on a small filesystem made for the test (a tmpfs
mounted with ``size=``) nearly filled by a ballast file. ``--once`` stops with exit status 3 and one line
naming the full disk, having written whole transactions only; following, the importer says so (log, metric,
readiness on its metrics port) and waits, and once the ballast is removed it continues to the tables of an
uninterrupted import."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests.cli.test_cli import free_port
from tests.importer.test_import_crash import FILES, ITEMS_PER_FILE, _count, _digest, _import, _write_stream
from tests.support import Ledger

from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings

EXIT_DATABASE = 3
DISK_MB = 120
"""Room for the empty cluster (about 40 MB with its first WAL segment) and the ballast."""
LEFT_KB = 400
"""What the ballast leaves free: less than the stream's rows need, more than the first commits."""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0 or shutil.which("mount") is None:
        pytest.skip(f"cannot mount a small filesystem here (needs root and mount): {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.fixture
def cluster_on_small_disk(small_disk: Path) -> Iterator[Prepared]:
    prepared = prepare(Settings(data_dir=small_disk / "data"), durable=False)
    try:
        yield prepared
    finally:
        prepared.stop()


def _fill(disk: Path) -> Path:
    """A ballast file leaving :data:`LEFT_KB` free."""
    ballast = disk / "ballast"
    free = shutil.disk_usage(disk).free
    with ballast.open("wb") as out:
        os.posix_fallocate(out.fileno(), 0, free - LEFT_KB * 1024)
    return ballast


def _command(root: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "ledgermirror", "import", "--source", str(root / "streams")]
    return [*command, "--address-book", str(root / "book.bin"), "--files-per-transaction", "3", *extra]


def _environment(url: str) -> dict[str, str]:
    return {**os.environ, "LEDGERMIRROR_DB_URL": url, "PYTHONPATH": os.pathsep.join(sys.path)}


async def _whole_files(url: str) -> tuple[int, int]:
    """The record files committed and the transactions written (each file holds ``ITEMS_PER_FILE``)."""
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("select count(*) from record_file")), int(
            await conn.fetchval("select count(*) from transaction")
        )
    finally:
        await conn.close()


def _metric(port: int, line_start: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(line_start):
                return float(line.rsplit(" ", 1)[1])
    return None


def _readiness(port: int) -> tuple[int, dict[str, Any]]:
    """The importer's readiness on its metrics port: status and body."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/readiness", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


@pytest.mark.usefixtures("ledger")
def test_full_disk_stops_the_import_whole_and_freed_space_lets_it_finish(
    database: Prepared, ledger: Ledger, tmp_path: Path, small_disk: Path, cluster_on_small_disk: Prepared
) -> None:
    (tmp_path / "stream").mkdir()
    root = _write_stream(tmp_path / "stream")
    assert asyncio.run(_import(database.owner_url, root))  # the uninterrupted run, on the suite's database
    expected = asyncio.run(_digest(database.owner_url))
    url = cluster_on_small_disk.owner_url
    ballast = _fill(small_disk)

    once = subprocess.run(
        _command(root, "--once"), env=_environment(url), capture_output=True, text=True, timeout=300, check=False
    )
    assert once.returncode == EXIT_DATABASE, once.stderr
    assert "Traceback" not in once.stderr
    last = once.stderr.splitlines()[-1]
    assert last.startswith("ledgermirror: the database's disk is full (could not extend file ")
    assert "No space left on device" in last
    files, transactions = asyncio.run(_whole_files(url))
    assert 0 < files < FILES
    assert transactions == files * ITEMS_PER_FILE  # nothing of the failed transaction was written

    port = free_port()
    following = subprocess.Popen(
        _command(root, "--metrics-port", str(port)),
        env=_environment(url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        waiting = 'ledgermirror_importer_waiting_for_database{cause="disk_full"}'
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and following.poll() is None:
            try:
                if _metric(port, waiting) == 1:
                    break
            except OSError:  # the metrics server is not up yet
                pass
            time.sleep(0.1)
        assert _metric(port, waiting) == 1
        assert (_metric(port, 'ledgermirror_importer_database_faults_total{cause="disk_full"}') or 0) >= 1
        status, body = _readiness(port)
        assert status == 503 and body["status"] == "DOWN" and body["cause"] == "disk_full"
        assert body["message"].startswith("the database's disk is full (could not extend file ")
        ballast.unlink()  # the operator frees space: the importer continues by itself
        deadline = time.monotonic() + 120
        while asyncio.run(_count(url)) < FILES and time.monotonic() < deadline and following.poll() is None:
            time.sleep(0.1)
        assert asyncio.run(_count(url)) == FILES
        assert _readiness(port) == (200, {"status": "UP"})
        # the source's requests, counted over every attempt: each file read at least once, listings
        gets = _metric(port, 'ledgermirror_importer_store_requests_total{operation="get"}')
        assert gets is not None and gets >= FILES - files
        assert (_metric(port, 'ledgermirror_importer_store_requests_total{operation="list"}') or 0) > 0
        assert (_metric(port, "ledgermirror_importer_store_read_bytes_total") or 0) > 0
    finally:
        following.send_signal(signal.SIGINT)
        _, stderr = following.communicate(timeout=60)
    assert following.returncode == 0, stderr
    assert "the database's disk is full" in stderr
    assert asyncio.run(_digest(url)) == expected
