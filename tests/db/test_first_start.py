"""A first start of the embedded server killed at any moment (SIGKILL of the command's process group: a crash,
the OOM killer, a power cut) leaves a data folder the next start opens, with no manual step; a stale
``postmaster.pid`` (its process gone, or another program's) is dealt with as PostgreSQL deals with it.

The kills are placed by what the folder shows (the first files of ``initdb``, its bootstrap backend's lock file,
each template database, the server's start), not by timers, so each run covers the same moments however
loaded the machine is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from tests.cli.test_cli import COMMAND

from ledgermirror.db.cluster import last_server_error

Marker = Callable[[Path], bool]


def _clusters(data_dir: Path) -> list[Path]:
    """Every folder under ``data_dir`` that is (or is becoming) a cluster: the data folder and any other."""
    if not data_dir.is_dir():
        return []
    return [path for path in data_dir.iterdir() if path.is_dir()]


def _any(relative: str) -> Marker:
    return lambda data_dir: any((cluster / relative).exists() for cluster in _clusters(data_dir))


def _bootstrap_lock(data_dir: Path) -> bool:
    """A standalone (bootstrap or single-user) backend's lock file: its pid is written negated."""
    for cluster in _clusters(data_dir):
        try:
            if (cluster / "postmaster.pid").read_text().startswith("-"):
                return True
        except OSError:
            continue
    return False


def _server_ready(data_dir: Path) -> bool:
    for cluster in _clusters(data_dir):
        try:
            if "ready" in (cluster / "postmaster.pid").read_text():
                return True
        except OSError:
            continue
    return False


KILL_POINTS: dict[str, Marker] = {
    "at once": lambda data_dir: True,
    "data folder made": lambda data_dir: bool(_clusters(data_dir)),
    "PG_VERSION written": _any("PG_VERSION"),
    "bootstrap backend running": _bootstrap_lock,
    "template1 made": _any("base/1/PG_VERSION"),
    "template0 made": _any("base/4/PG_VERSION"),
    "postgres database made": _any("base/5/PG_VERSION"),
    "server starting": _any("postmaster.opts"),
    "server ready": _server_ready,
}


def _env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(data_dir)}
    env.pop("LEDGERMIRROR_DB_URL", None)
    return env


def _killed_when(data_dir: Path, marker: Marker, *, timeout: float = 60) -> None:
    """Run a first start (``db migrate``) and SIGKILL its process group as soon as ``marker`` holds."""
    process = subprocess.Popen(
        [*COMMAND, "db", "migrate"],
        env=_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and not marker(data_dir):
            assert time.monotonic() < deadline, "the kill point was never reached"
            time.sleep(0.002)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _servers_of(data_dir: Path) -> list[psutil.Process]:
    """The PostgreSQL processes working in a folder under ``data_dir`` (their working folder is their cluster)."""
    found = []
    for process in psutil.process_iter(["name"]):
        if process.info["name"] != "postgres":
            continue
        try:
            if process.status() != psutil.STATUS_ZOMBIE and Path(process.cwd()).is_relative_to(data_dir):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    yield folder
    for process in _servers_of(folder):  # what a killed start left running
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()


def _normal_start(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, "db", "migrate"], env=_env(data_dir), capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_first_start_killed_at_any_point_starts_again(data_dir: Path, point: str) -> None:
    _killed_when(data_dir, KILL_POINTS[point])
    result = _normal_start(data_dir)
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    assert result.stdout == "migrations applied\n"
    deadline = time.monotonic() + 30
    while _servers_of(data_dir) and time.monotonic() < deadline:  # the last user of the server stopped it
        time.sleep(0.1)
    assert _servers_of(data_dir) == []


def _started(data_dir: Path) -> None:
    result = _normal_start(data_dir)
    assert result.returncode == 0, result.stderr


def _pgdata(data_dir: Path) -> Path:
    return data_dir / "pgdata"


_HOLD = (
    "import sys, time; from pathlib import Path; from ledgermirror.db.embedded import EmbeddedPostgres; "
    "EmbeddedPostgres(Path(sys.argv[1])).start(); print('up', flush=True); time.sleep(600)"
)


def _crash(data_dir: Path) -> str:
    """Start the server, then kill it (postmaster and backends) as a crash would; returns its lock file's text."""
    holder = subprocess.Popen(
        [COMMAND[0], "-c", _HOLD, str(data_dir)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "up\n"
        holder.stdout.close()
        lock = _pgdata(data_dir) / "postmaster.pid"
        text = lock.read_text()
        for server in _servers_of(data_dir):
            server.kill()
    finally:
        holder.kill()
        holder.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _servers_of(data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lock.exists()  # the crash left its lock file behind
    return text


def _another_program(text: str, other: int) -> str:
    lines = text.splitlines()
    lines[0] = str(other)
    return "\n".join(lines) + "\n"


STALE_LOCK_FILES: dict[str, Callable[[str, int], str]] = {
    "its process is gone": lambda text, other: text,
    "it names another program": _another_program,
    "it is empty": lambda text, other: "",
    "it is cut short": lambda text, other: text.splitlines()[0] + "\n" + text.splitlines()[1] + "\n",
    "it is a standalone backend's": lambda text, other: "-999999\n",
}


def test_a_stale_lock_file_is_removed_as_postgresql_would(data_dir: Path) -> None:
    """A crashed server's lock file, as it was left or as the kill or time made it, one case after another."""
    _started(data_dir)
    other = subprocess.Popen(["sleep", "600"])  # a live program whose number the lock file may name
    try:
        for case, stale in STALE_LOCK_FILES.items():
            text = _crash(data_dir)
            (_pgdata(data_dir) / "postmaster.pid").write_text(stale(text, other.pid))
            result = _normal_start(data_dir)
            assert result.returncode == 0, (case, result.stderr)
            assert "Traceback" not in result.stderr
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize(
    ("lines", "cause"),
    [
        (
            [
                "LOG:  startup process (PID 5) was terminated by signal 9: Killed",
                "LOG:  aborting startup due to startup process failure",
                "FATAL:  the database system is starting up",
            ],
            "aborting startup due to startup process failure",
        ),
        (
            [
                'PANIC:  could not write to file "pg_wal/xlogtemp.9": No space left on device',
                "FATAL:  the database system is in recovery mode",
            ],
            'could not write to file "pg_wal/xlogtemp.9": No space left on device',
        ),
        (["LOG:  database system is ready to accept connections"], None),
    ],
)
def test_why_a_server_did_not_start_is_its_log_s_cause(
    tmp_path: Path, lines: list[str], cause: str | None
) -> None:
    log = tmp_path / "log"
    log.write_text("".join(f"2026-11-27 22:08:13.314 UTC [15551] {line}\n" for line in lines))
    assert last_server_error(log) == cause
