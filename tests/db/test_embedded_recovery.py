"""A crashed embedded server whose WAL replay outlasts ``pg_ctl start``'s 10 s (pgserver's limit): the start
waits for the recovery and joins the recovered server, instead of failing while PostgreSQL goes on recovering.

A long import lets up to ``max_wal_size`` of WAL build up between checkpoints (16 GiB); replaying it after a
crash took about 170 MB/s here (1.8 GB in 10.6 s), so a recovery of more than 10 s is the usual case after a
crash in a long import. Here the replay is held for 12 s (its process stopped with SIGSTOP, then continued)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import asyncpg
import psutil

from ledgermirror.db import cluster
from ledgermirror.db.embedded import EmbeddedPostgres

_HOLD = (
    "import sys, time; from pathlib import Path; from ledgermirror.db.embedded import EmbeddedPostgres; "
    "print(EmbeddedPostgres(Path(sys.argv[1]), shared_buffers_mb=160).start(), flush=True); time.sleep(600)"
)
HELD_SECONDS = 12.0


async def _write(url: str, rows: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("create table kept (id bigint primary key, note text)")
        await conn.execute(f"insert into kept select i, repeat('x', 80) from generate_series(1, {rows}) i")
    finally:
        await conn.close()


async def _count(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("select count(*) from kept"))
    finally:
        await conn.close()


def _crashed_with_wal(data_dir: Path, rows: int) -> None:
    """A durable server (in a process of its own) given ``rows`` committed rows, then killed with its process."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(data_dir)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    pgdata = (data_dir / "pgdata").resolve()
    try:
        assert holder.stdout is not None
        with holder.stdout:
            url = holder.stdout.readline().strip()
        asyncio.run(_write(url, rows))
        for server in cluster.servers_in(pgdata):
            server.kill()
    finally:
        holder.kill()
        holder.wait(timeout=30)
    deadline = time.monotonic() + 30
    while cluster.servers_in(pgdata) and time.monotonic() < deadline:
        time.sleep(0.05)


def _hold_the_replay(pgdata: Path, held: list[float], stop: threading.Event) -> None:
    """Stop the server's startup process (the WAL replay) as soon as it shows, for ``HELD_SECONDS``."""
    while not stop.is_set():
        for process in cluster.servers_in(pgdata):
            try:
                title = " ".join(process.cmdline())
            except psutil.NoSuchProcess:
                continue
            if "startup" in title:
                os.kill(process.pid, signal.SIGSTOP)
                held.append(time.monotonic())
                stop.wait(HELD_SECONDS)
                os.kill(process.pid, signal.SIGCONT)
                return
        time.sleep(0.002)


def _holding_the_replay(pgdata: Path) -> tuple[threading.Thread, threading.Event, list[float]]:
    held: list[float] = []
    stop = threading.Event()
    holder = threading.Thread(target=_hold_the_replay, args=(pgdata, held, stop), daemon=True)
    holder.start()
    return holder, stop, held


def _recovered(pgdata: Path, url: str, took: float, held: list[float], rows: int) -> None:
    assert held, "the server's start replayed no WAL: it was not a crash recovery"
    assert took >= HELD_SECONDS  # pg_ctl gave up at 10 s, and the start waited on
    assert asyncio.run(_count(url)) == rows  # every committed row, replayed
    log = (pgdata / "log").read_text()
    assert "automatic recovery in progress" in log and "redo done" in log


def _released(pgdata: Path, holder: threading.Thread, stop: threading.Event, server: EmbeddedPostgres) -> None:
    stop.set()
    holder.join(timeout=30)
    server.stop()
    for left in cluster.servers_in(pgdata):  # a start that failed leaves its server running
        left.kill()


def test_a_start_waits_for_a_crash_recovery_longer_than_pg_ctls_limit(tmp_path: Path) -> None:
    rows = 400_000
    _crashed_with_wal(tmp_path, rows)
    pgdata = (tmp_path / "pgdata").resolve()
    holder, stop, held = _holding_the_replay(pgdata)
    server = EmbeddedPostgres(tmp_path, shared_buffers_mb=160)
    started = time.monotonic()
    try:
        url = server.start()
        _recovered(pgdata, url, time.monotonic() - started, held, rows)
    finally:
        _released(pgdata, holder, stop, server)


def test_a_server_killed_under_its_user_is_started_again_through_a_long_recovery(tmp_path: Path) -> None:
    """``ensure_running``, as the importer calls it when its embedded server went away: the same wait."""
    rows = 400_000
    pgdata = (tmp_path / "pgdata").resolve()
    server = EmbeddedPostgres(tmp_path, shared_buffers_mb=160)
    holder: threading.Thread | None = None
    stop = threading.Event()
    try:
        url = server.start()
        asyncio.run(_write(url, rows))
        for process in cluster.servers_in(pgdata):
            process.kill()
        deadline = time.monotonic() + 30
        while cluster.servers_in(pgdata) and time.monotonic() < deadline:
            time.sleep(0.05)
        holder, stop, held = _holding_the_replay(pgdata)
        started = time.monotonic()
        server.ensure_running()
        _recovered(pgdata, url, time.monotonic() - started, held, rows)
    finally:
        if holder is not None:
            _released(pgdata, holder, stop, server)
        else:
            server.stop()
