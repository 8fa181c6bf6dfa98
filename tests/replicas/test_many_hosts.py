"""Two ``ledgermirror serve`` processes over one database answer identically, under concurrent load: no state
beyond the database and per-process caches (docs/scaling.md, "Many API hosts")."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import asyncpg
import httpx
import pytest
from tests.cli.test_cli import free_port, wait_ready
from tests.support import Ledger

from ledgermirror import dataset
from ledgermirror.api.freshness import HEADER
from ledgermirror.runtime import Prepared

STARTS = (
    "/api/v1/transactions?limit=10",
    "/api/v1/accounts?limit=10",
    "/api/v1/tokens?limit=10",
    "/api/v1/blocks?limit=5",
    "/api/v1/balances?limit=10",
    "/api/v1/contracts/results?limit=5",
    "/api/v1/schedules?limit=5",
    "/api/v1/network/nodes",
    "/api/v1/network/supply",
)
SERVE = (sys.executable, "-m", "ledgermirror", "serve")
PAGES = 3
ROUNDS = 4
CLIENTS = 8


@pytest.fixture
def two_servers(database: Prepared, ledger: Ledger) -> Iterator[tuple[str, str]]:
    async def fill() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            await dataset.load(conn, "small", seed=5)
        finally:
            await conn.close()

    asyncio.run(fill())
    env = {
        **os.environ,
        "LEDGERMIRROR_DB_URL": database.owner_url,
        "LEDGERMIRROR_API_DB_URL": database.api_url,
        "LEDGERMIRROR_LOG_LEVEL": "WARNING",
    }
    processes, bases = [], []
    try:
        for _ in range(2):
            port = free_port()
            processes.append(
                subprocess.Popen(
                    [*SERVE, "--port", str(port), "--grpc-port", str(free_port())],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            bases.append(f"http://127.0.0.1:{port}")
        for base, process in zip(bases, processes, strict=True):
            try:
                wait_ready(base, process)
            except AssertionError:
                try:
                    urllib.request.urlopen(base + "/health/readiness", timeout=5)
                except urllib.error.HTTPError as error:
                    raise AssertionError(error.read()) from None
                raise
        yield bases[0], bases[1]
    finally:
        for process in processes:
            process.send_signal(signal.SIGINT)
        for process in processes:
            process.communicate(timeout=30)


def _paths(client: httpx.Client) -> list[str]:
    """Every start and the next links of its first pages."""
    found = []
    for start in STARTS:
        path: str | None = start
        for _ in range(PAGES):
            if path is None:
                break
            found.append(path)
            answer = client.get(path)
            assert answer.status_code == 200, (path, answer.text)
            links = answer.json().get("links") or {}
            path = links.get("next")
    return found


def test_two_serve_processes_answer_identically_under_load(two_servers: tuple[str, str]) -> None:
    first, second = two_servers
    with httpx.Client(base_url=first, timeout=30) as client:
        paths = _paths(client)
    assert len(paths) > len(STARTS)
    work = [(base, path) for _ in range(ROUNDS) for path in paths for base in (first, second)]

    def ask(item: tuple[str, str]) -> tuple[str, str, int, bytes, str]:
        base, path = item
        answer = httpx.get(base + path, timeout=30)
        return base, path, answer.status_code, answer.content, answer.headers.get(HEADER, "")

    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(ask, work))
    by_path: dict[str, set[tuple[int, bytes, str]]] = {}
    for _, path, status, body, fresh in answers:
        assert status == 200, (path, body)
        by_path.setdefault(path, set()).add((status, body, fresh))
    different = {path: len(seen) for path, seen in by_path.items() if len(seen) != 1}
    assert not different, different
    assert all(fresh for _, _, _, _, fresh in answers)  # every answer says how fresh it is
