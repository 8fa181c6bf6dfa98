"""Test helpers shared by the suites."""

from __future__ import annotations

import asyncio
import importlib
import warnings
from typing import Any

import asyncpg
from starlette.testclient import TestClient

from ledgermirror.api.context import AppContext
from ledgermirror.db.reset import reset
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings


class Ledger:
    """Writes fixture rows (in the reference spec-file setup language) as the database owner."""

    def __init__(self, url: str) -> None:
        self.url = url

    def load(self, setup: dict[str, Any]) -> None:
        asyncio.run(self._load(setup))

    def reset(self) -> None:
        asyncio.run(self._reset())

    def execute(self, sql: str, *args: Any) -> None:
        asyncio.run(self._execute(sql, *args))

    async def _load(self, setup: dict[str, Any]) -> None:
        from ledgermirror.conformance.loader import load_setup

        conn = await asyncpg.connect(self.url)
        try:
            await load_setup(conn, setup, spec="test")
        finally:
            await conn.close()

    async def _reset(self) -> None:

        conn = await asyncpg.connect(self.url)
        try:
            await reset(conn)
        finally:
            await conn.close()

    async def _execute(self, sql: str, *args: Any) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await conn.execute(sql, *args)
        finally:
            await conn.close()


def reconfigure(client: TestClient, settings: Settings) -> AppContext:
    """Give the client's app new settings, an empty response cache and the same clock and database: a fresh
    ``AppContext`` on the app's state, which is where every request finds it."""
    current: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    fresh = AppContext(settings, current.clock, current.db)
    client.app.state.ctx = fresh  # type: ignore[attr-defined]
    return fresh


def stop_server(database: Prepared) -> None:
    """Take the embedded server down as an outage would: a checkpoint first (so the restart has next to nothing
    to recover), then pg_ctl's immediate mode, which waits neither for clients nor for a shutdown checkpoint."""
    assert database.embedded is not None
    Ledger(database.owner_url).execute("checkpoint")
    server = _server_of(database)
    _pgserver().pg_ctl(
        ["-w", "-t", str(SERVER_WAIT_SECONDS), "-m", "immediate", "stop"],
        pgdata=server.pgdata,
        user=server.system_user,
        timeout=SERVER_WAIT_SECONDS + 30,
    )


def start_server(database: Prepared) -> None:
    """Start the stopped server in place (same folder and socket); return once it accepts connections."""
    server = _server_of(database)
    socket_dir = server.get_postmaster_info().socket_dir  # what it used before the stop
    _pgserver().pg_ctl(
        [
            "-w",
            "-t",
            str(SERVER_WAIT_SECONDS),
            "-o",
            '-h ""',
            "-o",
            f"-k {socket_dir}",
            "-l",
            str(server.log),
            "start",
        ],
        pgdata=server.pgdata,
        user=server.system_user,
        timeout=SERVER_WAIT_SECONDS + 30,
    )
    server.ensure_postgres_running()  # the handle learns the new process (it stops it when the run ends)


SERVER_WAIT_SECONDS = 60
"""How long pg_ctl may wait for the server to stop or to accept connections."""


def _server_of(database: Prepared) -> Any:
    assert database.embedded is not None
    return _pgserver().get_server(database.embedded.pgdata)  # the handle the run already holds


def _pgserver() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # importing it probes XDG_RUNTIME_DIR
        return importlib.import_module("pgserver")
