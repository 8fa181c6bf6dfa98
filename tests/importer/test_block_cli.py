"""``ledgermirror import --stream blocks`` and ``--status`` as a user runs them, on the reference's blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.importer.fixtures import SIGNING_BOOK, STREAMS

from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

_SRC = str(Path(__file__).resolve().parents[2] / "src")


def _import(database: Prepared, *arguments: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(part for part in (_SRC, os.environ.get("PYTHONPATH", "")) if part)
    environment = {**os.environ, "PYTHONPATH": path, "LEDGERMIRROR_DB_URL": database.owner_url}
    return subprocess.run(
        [sys.executable, "-m", "ledgermirror", "import", *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_blocks_import_and_the_status_says_chain_verified_only(database: Prepared) -> None:
    source = str(STREAMS / "data")
    book = str(SIGNING_BOOK)
    done = _import(database, "--source", source, "--stream", "blocks", "--address-book", book, "--once")
    assert done.returncode == 0, done.stderr
    assert "accepted as chain-verified only" in done.stderr
    status = _import(database, "--status")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert (shown["stream"], shown["last_index"], shown["last_proof"]) == ("blocks", 8, "tss")
    assert shown["last_proof_verified"] is False
    assert shown["chain_only"] == 2
    assert "chain-verified only" in shown["note"]


def test_import_needs_a_source_and_a_known_stream(database: Prepared, tmp_path: Path) -> None:
    assert _import(database).returncode == 2
    empty = _import(database, "--source", str(tmp_path), "--once")
    assert empty.returncode == 4
    assert "nor blocks" in empty.stderr
    refused = _import(database, "--source", str(STREAMS / "data"), "--stream", "ledgers")
    assert refused.returncode == 2
    assert "invalid choice" in refused.stderr
