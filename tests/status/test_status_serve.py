"""``ledgermirror status serve`` as a person runs it: it says where it will be at
once, its page URL and shortlinks follow ``--host/--port``, and a new store starts with the default components.

Each test starts the real command in a subprocess on the test cluster (``LEDGERMIRROR_DB_URL``) and a free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
from tests.status.harness import START
from tests.status.live import free_port, local_only_env

from ledgermirror.runtime import Prepared
from ledgermirror.status import components_ops, defaults, incidents_ops
from ledgermirror.status.config import StatusSettings

ROOT = Path(__file__).resolve().parents[2]
FIRST_LINE_SECONDS = 5.0
READY_SECONDS = 60.0
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Served:
    def __init__(self, process: subprocess.Popen[str], base: str) -> None:
        self.process = process
        self.base = base
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.started = time.monotonic()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def join(self) -> None:
        """After the process ended: the reader drains the pipe to its end, then the pipe is closed."""
        self._reader.join(timeout=10)
        assert self.process.stderr is not None
        self.process.stderr.close()

    def _pump(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put((time.monotonic() - self.started, line.rstrip("\n")))

    def next_line(self, timeout: float) -> tuple[float, str]:
        return self.lines.get(timeout=timeout)

    def get(self, path: str) -> Any:
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                with DIRECT.open(self.base + path, timeout=5) as response:
                    return json.loads(response.read())
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.2)


@contextlib.contextmanager
def status_serve(database: Prepared, *args: str, env_extra: dict[str, str] | None = None) -> Iterator[Served]:
    port = free_port()
    env = {key: value for key, value in local_only_env().items() if not key.startswith("LEDGERMIRROR_")}
    env.update(
        LEDGERMIRROR_DB_URL=database.owner_url,
        LEDGERMIRROR_API_DB_URL=database.api_url,
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        PYTHONUNBUFFERED="1",
        **(env_extra or {}),
    )
    command = [sys.executable, "-m", "ledgermirror", "status", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [*command, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    served = Served(process, f"http://127.0.0.1:{port}")
    try:
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        served.join()


def write(database: Prepared, work: Callable[[asyncpg.Connection[Any]], Awaitable[str]]) -> str:
    async def go() -> str:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return await work(conn)
        finally:
            await conn.close()

    return asyncio.run(go())


def test_serve_prints_its_url_at_once_and_links_to_the_address_served(clean: Prepared) -> None:
    write(clean, lambda conn: incidents_ops.open_incident(conn, {"name": "Slow"}, START, "tests"))
    with status_serve(clean) as served:
        seconds, first = served.next_line(timeout=FIRST_LINE_SECONDS)
        assert f"{served.base}/" in first, first
        assert seconds < FIRST_LINE_SECONDS
        summary = served.get("/api/v2/summary.json")
    assert summary["page"]["url"] == served.base, "the page URL follows --host/--port when none is configured"
    incident = summary["incidents"][0]
    assert incident["shortlink"] == f"{served.base}/incidents/{incident['id']}"


def test_a_new_store_starts_with_the_default_components(clean: Prepared) -> None:
    with status_serve(clean) as served:
        names = [item["name"] for item in served.get("/api/v2/components.json")["components"]]
    assert "Mirror Node REST API" in names and "Record stream importer" in names


def test_an_existing_store_is_never_touched(clean: Prepared) -> None:
    ours = write(clean, lambda conn: components_ops.create_component(conn, {"name": "Ours"}, START, "tests"))
    with status_serve(clean, env_extra={"LEDGERMIRROR_STATUS_AUTOMATION": "false"}) as served:
        components = served.get("/api/v2/components.json")["components"]
    assert [(item["id"], item["name"]) for item in components] == [(ours, "Ours")]


def test_the_evaluator_adds_the_networks_components_beside_an_operators(clean: Prepared) -> None:
    ours = write(clean, lambda conn: components_ops.create_component(conn, {"name": "Ours"}, START, "tests"))
    with status_serve(clean) as served:
        deadline = time.monotonic() + 20
        while True:
            components = served.get("/api/v2/components.json")["components"]
            names = {item["name"]: item for item in components}
            if "Record stream importer" in names or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert "Record stream importer" in names
    assert names["Ours"]["id"] == ours and names["Ours"]["status"] == "operational"


def test_first_start_leaves_a_store_with_only_incidents_alone(clean: Prepared) -> None:
    write(clean, lambda conn: incidents_ops.open_incident(conn, {"name": "Slow"}, START, "tests"))
    assert write(clean, first_start_ids) == ""
    assert write(clean, count_components) == "0"


def test_first_start_creates_the_defaults_once(clean: Prepared) -> None:
    created = write(clean, first_start_ids)
    assert created and write(clean, count_components) == str(len(created.split()))
    assert write(clean, first_start_ids) == ""


async def first_start_ids(conn: asyncpg.Connection[Any]) -> str:
    return " ".join(await defaults.ensure_on_first_start(conn, START, "tests"))


async def count_components(conn: asyncpg.Connection[Any]) -> str:
    return str(await conn.fetchval("select count(*) from status.component"))


def test_page_url_defaults_to_the_address_served() -> None:
    assert StatusSettings().public_url == "http://127.0.0.1:5552"
    assert StatusSettings.from_env({"LEDGERMIRROR_STATUS_PORT": "6001"}).public_url == "http://127.0.0.1:6001"
    assert StatusSettings(host="::1", port=6001).public_url == "http://[::1]:6001"
    configured = {"LEDGERMIRROR_STATUS_PAGE_URL": "https://status.example.org", "LEDGERMIRROR_STATUS_PORT": "6001"}
    assert StatusSettings.from_env(configured).public_url == "https://status.example.org"
