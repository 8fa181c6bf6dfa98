"""``ledgermirror import`` as a user runs it: exit codes, messages, follow mode stopped by SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.importer.fixtures import FIRST, NODE_IDS, RECORDS, SIGNING_BOOK
from tests.importer.importing import copy_streams, fetch, node_file

from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

_SRC = str(Path(__file__).resolve().parents[2] / "src")


def _environment(database: Prepared) -> dict[str, str]:
    path = os.pathsep.join(part for part in (_SRC, os.environ.get("PYTHONPATH", "")) if part)
    return {**os.environ, "PYTHONPATH": path, "LEDGERMIRROR_DB_URL": database.owner_url}


def _command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "ledgermirror", "import", *arguments]


def _stored(database: Prepared) -> int:
    return len(fetch(database.owner_url, "select name from record_file"))


def test_import_once_then_again(database: Prepared) -> None:
    arguments = ("--source", str(RECORDS), "--address-book", str(SIGNING_BOOK), "--once")
    done = subprocess.run(
        _command(*arguments), env=_environment(database), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert _stored(database) == 2
    again = subprocess.run(
        _command(*arguments), env=_environment(database), capture_output=True, timeout=120, check=False
    )
    assert again.returncode == 0
    assert b'"files":0' in again.stderr
    assert _stored(database) == 2


def test_a_refused_file_exits_1_naming_file_and_check(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    for node_id in NODE_IDS[1:]:
        node_file(streams, node_id, f"{FIRST}.rcd_sig").unlink()
    arguments = ("--source", str(streams), "--address-book", str(SIGNING_BOOK), "--once")
    done = subprocess.run(
        _command(*arguments), env=_environment(database), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert f"consensus check failed for file {FIRST}.rcd_sig" in done.stderr.decode()
    assert _stored(database) == 0


def test_usage_errors_exit_2(database: Prepared, tmp_path: Path) -> None:
    for arguments in (
        ("--source", str(RECORDS), "--once"),  # no address book in an empty database
        ("--source", "ftp://example/x", "--once"),
        ("--source", str(tmp_path / "missing"), "--once"),
        ("--source", str(RECORDS), "--start-date", "yesterday", "--once"),
        ("--source", str(RECORDS), "--balance-files", "--stream", "blocks", "--once"),
        (  # --balance-files and --initial-balances exclude each other
            *("--source", str(RECORDS), "--address-book", str(SIGNING_BOOK), "--balance-files", "--once"),
            *("--initial-balances", str(SIGNING_BOOK)),
        ),
    ):
        done = subprocess.run(
            _command(*arguments), env=_environment(database), capture_output=True, timeout=120, check=False
        )
        assert done.returncode == 2, arguments
        assert done.stderr.startswith(b"ledgermirror: ") or b"\nledgermirror: " in done.stderr, done.stderr
    assert _stored(database) == 0


def test_follow_mode_imports_new_files_and_stops_on_sigterm(database: Prepared, tmp_path: Path) -> None:
    """Started on an empty folder, it waits; files arriving are imported; SIGTERM ends it with exit 0."""
    streams = tmp_path / "streams"
    streams.mkdir()
    arguments = ("--source", str(streams), "--address-book", str(SIGNING_BOOK))
    process = subprocess.Popen(
        _command(*arguments), env=_environment(database), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        time.sleep(2)
        assert process.poll() is None
        copy_streams(streams)
        deadline = time.monotonic() + 60
        while _stored(database) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _stored(database) == 2
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=30)
        assert process.returncode == 0, errors.decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
