"""``ledgermirror blocknode serve`` and ``ledgermirror import --source grpc://...`` as a user runs them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.blocknode.serving import FIXTURES
from tests.blocknode.test_blocknode_stream import free_port
from tests.importer.importing import fetch

from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES

pytestmark = pytest.mark.usefixtures("ledger")

_SRC = str(Path(__file__).resolve().parents[2] / "src")


def _environment(database: Prepared) -> dict[str, str]:
    path = os.pathsep.join(part for part in (_SRC, os.environ.get("PYTHONPATH", "")) if part)
    return {**os.environ, "PYTHONPATH": path, "LEDGERMIRROR_DB_URL": database.owner_url}


def _ledgermirror(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "ledgermirror", *arguments]


def test_serve_then_import_once(network: Path, database: Prepared) -> None:
    environment = _environment(database)
    with subprocess.Popen(
        _ledgermirror("blocknode", "serve", "--blocks", str(network), "--port", "0"),
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            banner = server.stdout.readline()
            assert banner.startswith(f"block node serving {network} on 127.0.0.1:"), banner
            port = banner.rsplit(":", 1)[1].strip()
            imported = subprocess.run(
                _ledgermirror(
                    "import",
                    "--source",
                    f"grpc://127.0.0.1:{port}",
                    "--address-book",
                    str(network / "addressbook.bin"),
                    "--initial-balances",
                    str(network / INITIAL_BALANCES),
                    "--once",
                ),
                env=environment,
                capture_output=True,
                timeout=120,
                check=False,
            )
            assert imported.returncode == 0, imported.stderr.decode()
            assert len(fetch(database.owner_url, "select index from record_file")) == 8
        finally:
            server.send_signal(signal.SIGTERM)
            stopped = server.wait(timeout=30)
    assert stopped == 0


def test_no_block_node_answers_exits_4(network: Path, database: Prepared) -> None:
    source = f"grpc://127.0.0.1:{free_port()}"
    book = str(network / "addressbook.bin")
    done = subprocess.run(
        _ledgermirror("import", "--source", source, "--address-book", book, "--once"),
        env=_environment(database),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stderr.decode()
    assert f"no block node could serve block the first: {source[len('grpc://') :]}" in done.stderr.decode()


@pytest.mark.parametrize("source", ["grpc://localhost", "grpc://h:1,http://h:2"])
def test_a_bad_block_node_address_is_a_usage_error(database: Prepared, source: str) -> None:
    done = subprocess.run(
        _ledgermirror("import", "--source", source, "--once"),
        env=_environment(database),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr.decode()
    assert "block node address" in done.stderr.decode()


def test_serve_needs_a_folder(tmp_path: Path, database: Prepared) -> None:
    done = subprocess.run(
        _ledgermirror("blocknode", "serve", "--blocks", str(tmp_path / "missing")),
        env=_environment(database),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no folder at" in done.stderr.decode()


def test_serve_on_a_taken_port_exits_5(database: Prepared) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            _ledgermirror("blocknode", "serve", "--blocks", str(FIXTURES), "--port", str(port)),
            env=_environment(database),
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 5, done.stderr.decode()
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr.decode()
