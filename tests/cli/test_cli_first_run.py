"""A person's first run: a busy port is refused before anything starts, and on a terminal the logs are text
with the URL on a line of its own (JSON without colour codes when stderr is not a terminal)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.test_cli import COMMAND, free_port, run, wait_ready

from ledgermirror.runtime import Prepared

EXIT_CANNOT_LISTEN = 5


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_busy_port_is_refused_first(tmp_path: Path, busy_port: int, command: str) -> None:
    started = time.monotonic()
    result = run(command, "--port", str(busy_port), env={"LEDGERMIRROR_DATA_DIR": str(tmp_path)})
    assert result.returncode == EXIT_CANNOT_LISTEN
    assert result.stderr == (
        f"ledgermirror: port {busy_port} on 127.0.0.1 is already in use (is another ledgermirror serve or demo "
        "running?); stop it or choose another port with --port\n"
    )
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no embedded database was started, no demo data loaded
    assert time.monotonic() - started < 20


def test_host_that_cannot_be_listened_on(tmp_path: Path) -> None:
    result = run("serve", "--host", "192.0.2.1", env={"LEDGERMIRROR_DATA_DIR": str(tmp_path)})
    assert result.returncode == EXIT_CANNOT_LISTEN
    assert result.stderr.startswith("ledgermirror: cannot listen on 192.0.2.1:5551: ")
    assert result.stderr.count("\n") == 1


def _serve_env(database: Prepared) -> dict[str, str]:
    env = {**os.environ, "LEDGERMIRROR_DB_URL": database.owner_url, "LEDGERMIRROR_API_DB_URL": database.api_url}
    env.pop("LEDGERMIRROR_LOG_FORMAT", None)
    return env


def _read_until(fd: int, wanted: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_terminal_gets_text_logs_and_the_url_on_its_own_line(database: Prepared) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/v1/docs"
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*COMMAND, "serve", "--port", str(port), "--grpc-port", "0"],
        env=_serve_env(database),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)  # type: ignore[arg-type]
        seen = _read_until(controller, b"Application startup complete", 30)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        seen += _read_until(controller, b"\x00", 1)
        os.close(controller)
    lines = seen.decode().replace("\r\n", "\n").splitlines()
    assert url in lines
    assert not [line for line in lines if line.startswith("{")]
    assert "Uvicorn running on" in seen.decode()


def test_a_pipe_gets_json_logs_without_colour_codes(database: Prepared) -> None:
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, "serve", "--port", str(port), "--grpc-port", "0"],
        env=_serve_env(database),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    records = [json.loads(line) for line in stderr.splitlines()]
    docs = f"http://127.0.0.1:{port}/api/v1/docs"
    assert [record["url"] for record in records if "url" in record] == [docs]
    assert "\x1b[" not in stderr
