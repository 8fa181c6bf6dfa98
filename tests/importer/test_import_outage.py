"""The database restarting under ``ledgermirror import`` (pg_ctl's fast and immediate shutdown, then a start):
following, the importer waits, tries again with backoff and ends with the tables of an uninterrupted run;
with ``--once`` it stops with exit status 3 and one line, and a restart ends with the same tables."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import pytest
from tests.importer.test_import_crash import FILES, _count, _digest, _import, _write_stream
from tests.support import Ledger, start_server, stop_server

from ledgermirror.importer.outage import DISK_FULL, UNAVAILABLE, database_fault
from ledgermirror.metrics.importer import DATABASE_FAULT_CAUSES
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

EXIT_DATABASE = 3


def _command(root: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "ledgermirror", "import", "--source", str(root / "streams")]
    return [*command, "--address-book", str(root / "book.bin"), "--files-per-transaction", "3", *extra]


def _environment(url: str) -> dict[str, str]:
    return {**os.environ, "LEDGERMIRROR_DB_URL": url, "PYTHONPATH": os.pathsep.join(sys.path)}


def _wait_for_files(url: str, process: subprocess.Popen[str], files: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    count = 0
    while time.monotonic() < deadline and process.poll() is None:
        try:
            count = asyncio.run(_count(url))
        except OSError:  # the server is down
            count = 0
        if count >= files:
            break
        time.sleep(0.05)
    return count


def _expected(database: Prepared, ledger: Ledger, root: Path) -> dict[str, str]:
    assert asyncio.run(_import(database.owner_url, root))
    expected = asyncio.run(_digest(database.owner_url))
    ledger.reset()
    return expected


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_following_importer_waits_out_a_restart(
    database: Prepared, ledger: Ledger, tmp_path: Path, mode: str
) -> None:
    root = _write_stream(tmp_path)
    url = database.owner_url
    expected = _expected(database, ledger, root)
    process = subprocess.Popen(
        _command(root), env=_environment(url), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert 0 < _wait_for_files(url, process, 1, 60) < FILES
        stop_server(database, mode)
        try:
            time.sleep(1.5)  # the importer finds the database gone and waits
            assert process.poll() is None, "the importer ended with the database"
        finally:
            start_server(database)
        assert _wait_for_files(url, process, FILES, 120) == FILES
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "the database is unavailable" in stderr
    assert asyncio.run(_digest(url)) == expected


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_once_stops_with_the_database_status_and_a_restart_ends_the_same(
    database: Prepared, ledger: Ledger, tmp_path: Path, mode: str
) -> None:
    root = _write_stream(tmp_path)
    url = database.owner_url
    expected = _expected(database, ledger, root)
    process = subprocess.Popen(
        _command(root, "--once"),
        env=_environment(url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert 0 < _wait_for_files(url, process, 1, 60) < FILES
        stop_server(database, mode)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        start_server(database)
    assert process.returncode == EXIT_DATABASE, stderr
    last = stderr.splitlines()[-1]
    assert last.startswith("ledgermirror: the database is unavailable (")
    assert "Traceback" not in stderr
    again = subprocess.run(
        _command(root, "--once"), env=_environment(url), capture_output=True, text=True, timeout=300, check=False
    )
    assert again.returncode == 0, again.stderr
    assert asyncio.run(_digest(url)) == expected


@pytest.mark.parametrize(
    ("error", "connection_lost", "cause"),
    [
        (asyncpg.DiskFullError('could not extend file "base/5/1": No space left on device'), False, "disk_full"),
        (asyncpg.AdminShutdownError("terminating connection due to administrator command"), True, "unavailable"),
        (asyncpg.CannotConnectNowError("the database system is starting up"), True, "unavailable"),
        (
            asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
            True,
            "unavailable",
        ),
        (ConnectionResetError(104, "Connection reset by peer"), True, "unavailable"),
        (ConnectionResetError(104, "Connection reset by peer"), False, None),  # the source's, not the database's
        (TimeoutError(), False, None),
        (asyncpg.UniqueViolationError("duplicate key value"), False, None),  # a bug, never retried
        (ValueError("bad"), True, None),
    ],
)
def test_which_failures_are_the_databases(error: BaseException, connection_lost: bool, cause: str | None) -> None:
    fault = database_fault(error, connection_lost=connection_lost)
    assert (fault.cause if fault is not None else None) == cause
    if fault is not None:
        assert "\n" not in fault.message


def test_fault_causes_are_the_metrics_labels() -> None:
    assert {DISK_FULL, UNAVAILABLE} == set(DATABASE_FAULT_CAUSES)
