"""Chaos, bounded in time: while a stream is published file by file and followed by ``ledgermirror import``
(which runs the embedded PostgreSQL) and a client reads through ``ledgermirror serve --workers 2``, random
SIGKILLs hit the importer, the PostgreSQL postmaster, a PostgreSQL backend and an API worker. The importer is
started again when killed, as a supervisor would; nothing else is helped. Afterwards the tables equal an
uninterrupted import's and no answer the client got was a 5xx other than 503."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import httpx
import psutil
import pytest
from tests.cli.test_cli import free_port, wait_ready
from tests.importer.test_import_crash import _WALL_CLOCK_COLUMNS, FILES, _count, _digest, _import, _write_stream
from tests.support import Ledger

from ledgermirror.db.embedded import with_user
from ledgermirror.runtime import Prepared

CHAOS_SECONDS = 8.0
"""How long the kills go on (the stream is published over the same time)."""
KINDS = ("importer", "postmaster", "backend", "api worker")
PATHS = ("/api/v1/transactions?limit=5", "/api/v1/blocks?limit=2&order=desc", "/health/readiness")


def _publish_plan(staging: Path, published: Path, steps: int) -> list[list[tuple[Path, Path]]]:
    """The stream's files in ``steps`` batches in stream order (each file renamed into place: never half there);
    the node folders are made at once."""
    for folder in staging.rglob("*"):
        if folder.is_dir():
            (published / folder.relative_to(staging)).mkdir(parents=True, exist_ok=True)
    moves = []
    for source in sorted(staging.rglob("*"), key=lambda path: (path.name, str(path))):
        if source.is_file():
            target = published / source.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            moves.append((source, target))
    size = -(-len(moves) // steps)
    return [moves[index : index + size] for index in range(0, len(moves), size)]


CHAOS_SKIP = {
    **_WALL_CLOCK_COLUMNS,
    "signature_evidence": ("imported_at", "valid_nodes", "failed_nodes", "missing_nodes"),
}
"""Besides the wall clock, which nodes' signature files a file had when it was imported: a batch of the published
stream may end between two nodes' signature files of one record file, and the importer may take that file once a
third of the stake has signed (the evidence says which were missing then). One evidence row per file still."""


def _publish(batch: list[tuple[Path, Path]]) -> None:
    for source, target in batch:
        shutil.move(source, target)


def _postgres_in(pgdata: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name"]):
        try:
            if (
                process.info["name"] == "postgres"
                and process.status() != psutil.STATUS_ZOMBIE
                and Path(process.cwd()) == pgdata
            ):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _postmaster(pgdata: Path) -> psutil.Process | None:
    processes = _postgres_in(pgdata)
    pids = {process.pid for process in processes}
    for process in processes:
        try:
            if process.ppid() not in pids:
                return process
        except psutil.NoSuchProcess:
            continue
    return None


def _workers(server: subprocess.Popen[str]) -> list[psutil.Process]:
    try:
        children = psutil.Process(server.pid).children()
    except psutil.NoSuchProcess:
        return []
    workers = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                workers.append(child)
        except psutil.NoSuchProcess:
            continue
    return workers


class _Reader:
    """A client reading the API in a loop: every status it got, and how many requests failed to connect."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.statuses: Counter[int] = Counter()
        self.failed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        with httpx.Client(base_url=self.base, trust_env=False, timeout=10) as client:
            turn = 0
            while not self.stop.is_set():
                try:
                    self.statuses[client.get(PATHS[turn % len(PATHS)]).status_code] += 1
                except httpx.HTTPError:  # the worker that had the connection was killed
                    self.failed += 1
                    time.sleep(0.05)
                turn += 1


def _connects(url: str) -> bool:
    async def probe() -> None:
        conn = await asyncpg.connect(url, timeout=2)
        await conn.close()

    try:
        asyncio.run(probe())
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
        return False
    return True


def _until(condition: Callable[[], bool], seconds: float, what: str, context: Callable[[], str] = str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{context()}"
        time.sleep(0.1)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "db"
    yield folder
    for process in _postgres_in((folder / "pgdata").resolve()):
        try:
            process.kill()
        except psutil.NoSuchProcess:
            continue


class _Chaos:
    """The processes under test: the importer (started again when killed), the embedded server it runs, the API."""

    def __init__(self, environment: dict[str, str], importer_command: list[str], pgdata: Path, log: Path) -> None:
        self.log = log
        self.environment = environment
        self.importer_command = importer_command
        self.pgdata = pgdata
        self.importer = self._start_importer()
        self.server: subprocess.Popen[str] | None = None
        self.kills: Counter[str] = Counter()

    def _start_importer(self) -> subprocess.Popen[str]:
        with self.log.open("a") as log:  # every importer's log, for a failure's message
            return subprocess.Popen(
                self.importer_command, env=self.environment, stdout=subprocess.DEVNULL, stderr=log
            )

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text().splitlines()[-40:])

    def keep_importer(self) -> None:
        """What a supervisor does: start the importer again when it is gone."""
        if self.importer.poll() is not None:
            self.importer = self._start_importer()

    def serve(self, port: int, url: str) -> subprocess.Popen[str]:
        served = {
            **self.environment,
            "LEDGERMIRROR_DB_URL": url,
            "LEDGERMIRROR_API_DB_URL": with_user(url, "mirror_api"),
        }
        self.server = subprocess.Popen(
            [sys.executable, "-m", "ledgermirror", "serve", "--workers", "2", "--port", str(port)],
            env=served,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        return self.server

    def victims(self, kind: str) -> list[psutil.Process]:
        if kind == "importer":
            return [psutil.Process(self.importer.pid)] if self.importer.poll() is None else []
        postmaster = _postmaster(self.pgdata)
        if kind == "postmaster":
            return [postmaster] if postmaster is not None else []
        if kind == "backend":
            return [p for p in _postgres_in(self.pgdata) if postmaster is None or p.pid != postmaster.pid][:1]
        return _workers(self.server)[:1] if self.server is not None else []

    def kill(self, kind: str) -> None:
        for victim in self.victims(kind):
            try:
                victim.kill()
                self.kills[kind] += 1
            except psutil.NoSuchProcess:
                continue

    def stop(self) -> None:
        processes = [process for process in (self.server, self.importer) if process is not None]
        for process in processes:
            process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _migrated(environment: dict[str, str]) -> None:
    migrated = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "db", "migrate"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert migrated.returncode == 0, migrated.stderr


def _stream(database: Prepared, staging: Path) -> tuple[Path, dict[str, str]]:
    """The stream, and the digest of its uninterrupted import (on the suite's database)."""
    staging.mkdir()
    root = _write_stream(staging)
    assert asyncio.run(_import(database.owner_url, root))
    return root, asyncio.run(_digest(database.owner_url, CHAOS_SKIP))


@pytest.mark.usefixtures("ledger")
def test_chaos_ends_with_the_tables_of_an_uninterrupted_import(
    database: Prepared, ledger: Ledger, tmp_path: Path, data_dir: Path
) -> None:
    root, expected = _stream(database, tmp_path / "staging")
    published = tmp_path / "published"
    plan = _publish_plan(root / "streams", published, 12)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LEDGERMIRROR_DATA_DIR": str(data_dir)}
    environment.pop("LEDGERMIRROR_DB_URL", None)
    _migrated(environment)
    pgdata = (data_dir / "pgdata").resolve()
    url = f"postgresql://postgres:@/postgres?host={pgdata}"
    command = [sys.executable, "-m", "ledgermirror", "import", "--source", str(published)]
    command += ["--address-book", str(root / "book.bin"), "--files-per-transaction", "3"]
    chaos = _Chaos(environment, command, pgdata, tmp_path / "importer.log")
    _until(lambda: _connects(url), 60, "the importer's embedded server")
    base = f"http://127.0.0.1:{free_port()}"
    server = chaos.serve(int(base.rpartition(":")[2]), url)
    reader = _Reader(base)
    try:
        wait_ready(base, server)
        reader.thread.start()
        chance = random.Random(26)
        deadline = time.monotonic() + CHAOS_SECONDS
        batches = iter(plan)
        while time.monotonic() < deadline:
            _publish(next(batches, []))
            time.sleep(chance.uniform(0.3, 0.9))
            done = sum(chaos.kills.values())
            chaos.kill(KINDS[done] if done < len(KINDS) else chance.choice(KINDS))  # each kind once, then any
            chaos.keep_importer()
        for batch in batches:
            _publish(batch)
        chaos.keep_importer()

        def caught_up() -> bool:
            chaos.keep_importer()  # an importer may end (exit 3) on a server the kills left: a supervisor goes on
            return _connects(url) and asyncio.run(_count(url)) == FILES

        _until(
            caught_up,
            90,
            "the importer to catch up",
            lambda: f"kills: {chaos.kills}\nthe importers' log:\n{chaos.log_tail()}",
        )
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as client:
            _until(lambda: client.get(PATHS[0]).status_code == 200, 30, "the API to recover")
        digest = asyncio.run(_digest(url, CHAOS_SKIP))
    finally:
        reader.stop.set()
        if reader.thread.is_alive():
            reader.thread.join(timeout=30)
        chaos.stop()
    assert set(chaos.kills) == set(KINDS), chaos.kills
    assert digest == expected
    server_errors = {status: seen for status, seen in reader.statuses.items() if status >= 500 and status != 503}
    assert server_errors == {}, reader.statuses
    assert reader.statuses[200] > 0, reader.statuses
