"""Test helpers shared by the suites."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import subprocess
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import asyncpg
from starlette.testclient import TestClient

from ledgermirror.api.context import AppContext
from ledgermirror.clock import Clock
from ledgermirror.db.reset import reset
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

T = TypeVar("T")


class Ledger:
    """Writes fixture rows (in the reference spec-file setup language) as the database owner.

    A plain ``Ledger(url)`` opens a connection (on a new event loop) per call. The suites' ``ledger`` fixture uses
    :meth:`kept`: one loop and one owner connection for the whole run, reopened when the server dropped it (the
    outage test restarts the server), which saves a connection per call on every test.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._runner: asyncio.Runner | None = None
        self._conn: asyncpg.Connection | None = None

    @classmethod
    @contextlib.contextmanager
    def kept(cls, url: str) -> Iterator[Ledger]:
        ledger = cls(url)
        ledger._runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        try:
            yield ledger
        finally:
            if ledger._conn is not None:
                ledger._conn.terminate()  # nothing is pending between calls
            ledger._runner.close()

    def load(self, setup: dict[str, Any]) -> None:
        from ledgermirror.conformance.loader import load_setup

        self._run(lambda conn: load_setup(conn, setup, spec="test"))

    def reset(self) -> None:
        self._run(reset)

    def execute(self, sql: str, *args: Any) -> None:
        self._run(lambda conn: conn.execute(sql, *args))

    def _run(self, action: Callable[[asyncpg.Connection], Awaitable[Any]]) -> None:
        if self._runner is None:
            asyncio.run(_once(self.url, action))
        else:
            self._runner.run(action(self._runner.run(self._connection())))

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is not None and not self._conn.is_closed():
            try:
                await self._conn.execute("select 1")
                return self._conn
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                self._conn.terminate()  # the server went away since the last call
        self._conn = await asyncpg.connect(self.url)
        return self._conn


def with_connection(url: str, action: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """``action`` on a connection of its own to ``url``; its result."""

    async def main() -> T:
        conn = await asyncpg.connect(url)
        try:
            return await action(conn)
        finally:
            await conn.close()

    return asyncio.run(main())


async def _once(url: str, action: Callable[[asyncpg.Connection], Awaitable[Any]]) -> None:
    conn = await asyncpg.connect(url)
    try:
        await action(conn)
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def entity_analyzed_with_few_live_rows(conn: asyncpg.Connection) -> AsyncIterator[None]:
    """Inside: ``entity`` empty, with statistics taken while it held 5 live rows among many dead pages
    (autovacuum off for it, so the state stays), so the planner takes it for a table of a few rows whatever it
    holds. After: autovacuum back on and the table analyzed again (the other tests share the database)."""
    await conn.execute("alter table entity set (autovacuum_enabled = false)")
    await conn.execute(
        "insert into entity (id, num, realm, shard, timestamp_range)"
        " select n, n, 0, 0, int8range(1, null) from generate_series(1, 60000) n"
    )
    await conn.execute("delete from entity where id > 5")
    await conn.execute("analyze entity")
    await conn.execute("delete from entity")
    try:
        yield
    finally:
        await conn.execute("alter table entity reset (autovacuum_enabled)")
        await conn.execute("analyze entity")


async def generic_plan(conn: asyncpg.Connection, statement: str, settings: tuple[str, ...]) -> str:
    """The plan PostgreSQL keeps for a prepared ``statement`` under ``settings`` (which force generic plans: the
    plan made for any values, as the importer's writer runs its statements), explained in a transaction of its
    own."""
    count = len((await conn.prepare(statement)).get_parameters())
    async with conn.transaction():
        await conn.execute(";\n".join(settings))
        await conn.execute(f"prepare ledgermirror_explained as {statement}")
        rows = await conn.fetch(f"explain execute ledgermirror_explained({', '.join(['null'] * count)})")
        await conn.execute("deallocate ledgermirror_explained")
    return "\n".join(row[0] for row in rows)


def reconfigure(client: TestClient, settings: Settings, clock: Clock | None = None) -> AppContext:
    """Give the client's app new settings, an empty response cache, the same clock (or ``clock``), the same
    database and (for the same concurrency) contract-call workers: a fresh ``AppContext`` on the app's state, where
    every request finds it. A context dropped with its workers would leave their processes running."""
    current: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    fresh = AppContext(settings, clock or current.clock, current.db)
    if settings.contract_call_concurrency == current.settings.contract_call_concurrency:
        fresh.contract_workers = current.contract_workers  # the contract-call worker processes kept
    else:
        current.contract_workers.close()
    client.app.state.ctx = fresh  # type: ignore[attr-defined]
    return fresh


def stop_server(database: Prepared, mode: str = "immediate") -> None:
    """Take the embedded server down as an outage would: a checkpoint first (so the restart has next to nothing
    to recover), then pg_ctl's immediate mode, which waits neither for clients nor for a shutdown checkpoint.
    On a loaded machine pg_ctl may give up although the server goes down; what counts is that it is down.
    ``mode="fast"`` is pg_ctl's default instead: sessions are told to end (admin shutdown) mid-query."""
    assert database.embedded is not None
    Ledger(database.owner_url).execute("checkpoint")
    server = _server_of(database)
    for attempt in range(3):
        try:
            _pg_ctl(server, ["-w", "-t", str(SERVER_WAIT_SECONDS), "-m", mode, "stop"])
        except subprocess.CalledProcessError:
            if attempt == 2 and _running(server):
                raise
        if not _running(server):
            return


def start_server(database: Prepared) -> None:
    """Start the stopped server in place (same folder and socket); return once it accepts connections."""
    server = _server_of(database)
    if _running(server):  # the stop never took effect: nothing to start
        server.ensure_postgres_running()
        return
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


def _pg_ctl(server: Any, args: list[str]) -> None:
    _pgserver().pg_ctl(args, pgdata=server.pgdata, user=server.system_user, timeout=SERVER_WAIT_SECONDS + 30)


def _running(server: Any) -> bool:
    """Whether a postmaster runs on the server's data folder (``pg_ctl status`` exits 3 when none does)."""
    try:
        _pg_ctl(server, ["status"])
    except subprocess.CalledProcessError:
        return False
    return True


def _server_of(database: Prepared) -> Any:
    assert database.embedded is not None
    return _pgserver().get_server(database.embedded.pgdata)  # the handle the run already holds


def _pgserver() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # importing it probes XDG_RUNTIME_DIR
        return importlib.import_module("pgserver")
