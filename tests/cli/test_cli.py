"""The ``ledgermirror`` command as a user runs it: help, bad usage, unreachable databases, a real server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledgermirror.users import verify_password

COMMAND = [sys.executable, "-m", "ledgermirror"]


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["serve", "--help"],
        ["demo", "--help"],
        ["db", "--help"],
        ["db", "migrate", "--help"],
        ["db", "url", "--help"],
    ],
)
def test_help_everywhere(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 0
    assert "usage: ledgermirror" in result.stdout


@pytest.mark.parametrize(
    "args", [[], ["bogus"], ["serve", "--port", "99999"], ["serve", "--workers", "0"], ["db"], ["db", "drop"]]
)
def test_bad_usage_exits_2(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_bad_setting_exits_2() -> None:
    result = run("db", "url", env={"LEDGERMIRROR_PORT": "eighty"})
    assert result.returncode == 2
    assert "LEDGERMIRROR_PORT must be an integer" in result.stderr


def test_unreachable_database_is_a_clear_error() -> None:
    url = "postgresql://someone:topsecret@127.0.0.1:1/nowhere"
    result = run("db", "migrate", env={"LEDGERMIRROR_DB_URL": url})
    assert result.returncode == 3
    assert "cannot use the database at postgresql://someone:***@127.0.0.1:1/nowhere" in result.stderr
    assert "topsecret" not in result.stderr


def test_db_url_masks_password() -> None:
    result = run("db", "url", env={"LEDGERMIRROR_DB_URL": "postgresql://u:pw@127.0.0.1:1/db"})
    # the URL is printed before any connection is needed only for embedded; here the server is unreachable
    assert "pw@" not in result.stdout + result.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str, process: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read() if process.stderr else ''}")
        try:
            with urllib.request.urlopen(base + "/health/readiness", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not become ready")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [*COMMAND, "serve", "--port", str(port), "--grpc-port", "0", "--workers", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, process)
        yield base, tmp_path
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_serve_on_embedded_database(served: tuple[str, Path]) -> None:
    base, data_dir = served
    with urllib.request.urlopen(base + "/api/v1/tokens?limit=2&order=desc", timeout=5) as response:
        assert response.status == 200
        assert response.headers["cache-control"] == "public, max-age=10"
        assert json.loads(response.read()) == {"tokens": [], "links": {"next": None}}
    result = run("db", "url", env={"LEDGERMIRROR_DATA_DIR": str(data_dir)})
    assert result.returncode == 0
    assert result.stdout.startswith("postgresql://")


def test_demo_serves_the_synthetic_ledger(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [*COMMAND, "demo", "--port", str(port), "--grpc-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, process, seconds=120)
        with urllib.request.urlopen(base + "/api/v1/tokens?limit=2&order=desc", timeout=5) as response:
            body = json.loads(response.read())
        assert len(body["tokens"]) == 2
        assert body["links"]["next"].startswith("/api/v1/tokens?limit=2&order=desc&token.id=lt:")
        with urllib.request.urlopen(base + body["links"]["next"], timeout=5) as response:
            assert len(json.loads(response.read())["tokens"]) == 2
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert "demo data loaded" in stderr
    assert (tmp_path / "demo" / "pgdata").is_dir()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_stops_its_embedded_database(tmp_path: Path, stop: signal.Signals) -> None:
    import psutil

    port = free_port()
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [*COMMAND, "serve", "--port", str(port), "--grpc-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)
    finally:
        process.send_signal(stop)
        process.communicate(timeout=30)
    assert process.returncode == 0

    def postgres_for_folder() -> list[int]:
        found = []
        for candidate in psutil.process_iter(["cmdline"]):
            if any(str(tmp_path) in part for part in candidate.info["cmdline"] or ()):
                found.append(candidate.pid)
        return found

    deadline = time.monotonic() + 10
    while postgres_for_folder() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert postgres_for_folder() == []


def test_metrics_add_up_across_workers(served: tuple[str, Path]) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    base, _ = served
    for limit in range(1, 21):
        with urllib.request.urlopen(f"{base}/api/v1/tokens?limit={limit}", timeout=5) as response:
            assert response.status == 200

    def scrape() -> dict[str, float]:
        counted: dict[str, float] = {}
        with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
            text = response.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "ledgermirror_http_requests_total" and sample.labels["route"].endswith(
                    "/tokens"
                ):
                    counted[sample.labels["status"]] = sample.value
        return counted

    # A worker hands its counts to the shared files before each scrape it answers and once a second
    # (docs/metrics.md, "Cost"), so the other worker's counts may reach a scrape up to a second late.
    deadline = time.monotonic() + 10
    while (counted := scrape()) != {"2xx": 20} and time.monotonic() < deadline:
        assert counted.get("2xx", 0) <= 20, counted  # never more than were answered
        time.sleep(0.2)
    assert counted == {"2xx": 20}
    for _ in range(4):  # whichever worker answers the scrape, it reports the sum over both
        assert scrape() == {"2xx": 20}


def test_hash_password_prints_a_hash_users_accept() -> None:
    hashed = subprocess.run(
        [*COMMAND, "hash-password"], input="s3cret\n", capture_output=True, text=True, timeout=60, check=False
    )
    assert hashed.returncode == 0, hashed.stderr
    stored = hashed.stdout.strip()
    assert stored.startswith("pbkdf2_sha256$") and verify_password("s3cret", stored)
    users = json.dumps([{"username": "u", "password_hash": stored, "limit": 500}])
    assert run("db", "url", "--help", env={"LEDGERMIRROR_USERS": users}).returncode == 0
    broken = run("db", "url", env={"LEDGERMIRROR_USERS": '[{"username": "u"}]'})
    assert broken.returncode == 2
    assert "users[0] must have a password_hash string" in broken.stderr
    empty = subprocess.run(
        [*COMMAND, "hash-password"], input="\n", capture_output=True, text=True, timeout=60, check=False
    )
    assert empty.returncode == 2


def _listening_workers(port: int, server_pid: int) -> dict[int, tuple[str, int]]:
    """The serving processes under ``server_pid`` with a listening socket on ``port``: that socket (its inode)
    and their established connections on the port."""
    import psutil

    found: dict[int, tuple[str, int]] = {}
    for child in psutil.Process(server_pid).children(recursive=True):
        try:
            sockets = child.net_connections(kind="tcp")
            listening = [
                os.readlink(f"/proc/{child.pid}/fd/{conn.fd}")
                for conn in sockets
                if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port
            ]
        except (psutil.NoSuchProcess, FileNotFoundError):
            continue
        if listening:
            established = sum(
                conn.status == psutil.CONN_ESTABLISHED and conn.laddr.port == port for conn in sockets
            )
            found[child.pid] = (listening[0], established)
    return found


def _wait_for_workers(port: int, server_pid: int, count: int) -> dict[int, tuple[str, int]]:
    """The listening workers once ``count`` of them listen, or as found after a minute: ready means one worker
    answers, the others may not listen yet."""
    deadline = time.monotonic() + 60
    workers = _listening_workers(port, server_pid)
    while len(workers) < count and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = _listening_workers(port, server_pid)
    return workers


def _open_connections(port: int, count: int) -> list[socket.socket]:
    """``count`` connections opened together (as a client's pool opens them), each then having had one request
    answered, so its worker has accepted it; kept open."""
    opened = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]
    for conn in opened:
        conn.sendall(b"GET /health/liveness HTTP/1.1\r\nhost: x\r\n\r\n")
    for conn in opened:
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
    return opened


def test_each_worker_listens_on_its_own_socket_and_connections_are_spread(served: tuple[str, Path]) -> None:
    """Connections opened together are spread over the workers by the kernel (``http_server.SharedPort``), not
    all taken by whichever worker woke first; a worker that dies is replaced and nothing is left unserved."""
    base, _ = served
    port = int(base.rsplit(":", 1)[1])
    server_pid = _server_pid(port)
    _wait_for_workers(port, server_pid, 2)
    opened = _open_connections(port, 200)
    try:
        spread = _listening_workers(port, server_pid)
        assert len({listening for listening, _ in spread.values()}) == 2  # a socket each, not one shared
        counts = [established for _, established in spread.values()]
        assert sum(counts) == 200
        assert min(counts) >= 60, spread  # even is 100 each; the hash's spread is about 7
    finally:
        for conn in opened:
            conn.close()
    victim = next(iter(spread))
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = _listening_workers(port, server_pid)
        if len(workers) == 2 and victim not in workers:
            break
        time.sleep(0.2)
    assert len(workers) == 2 and victim not in workers
    for conn in _open_connections(port, 50):  # none lands on a socket nobody listens on
        conn.close()


def test_a_second_server_on_the_same_port_is_refused(served: tuple[str, Path], tmp_path: Path) -> None:
    """Workers listen with ``SO_REUSEPORT``, which would let a second server of ours share the port with the first
    (answering half its connections from another database); ``commands/serve.listen_problem`` binds as any server
    does before anything starts, so the second is still refused."""
    base, _ = served
    port = base.rsplit(":", 1)[1]
    second = subprocess.run(
        [*COMMAND, "serve", "--port", port, "--grpc-port", "0", "--workers", "2"],
        env={**os.environ, "LEDGERMIRROR_DATA_DIR": str(tmp_path / "second")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert second.returncode != 0
    assert "in use" in second.stderr
    # the first one serves on, with both its workers (ready meant one answered; the other may have come up since)
    assert len(_wait_for_workers(int(port), _server_pid(int(port)), 2)) == 2


def _server_pid(port: int) -> int:
    """The ``serve`` process of the server on ``port`` (the parent of its workers)."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "serve" in cmdline and str(port) in cmdline:
            return int(proc.pid)
    raise AssertionError(f"no serve process for port {port}")
