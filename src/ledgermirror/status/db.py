"""Connections of the status service, and the read-only role's access to the public tables of ``status``.

The public endpoints read through the mirror's read-only role (``mirror_api``): it gets ``select`` on the
tables the page shows, never on ``api_key`` or ``audit_log``. The management API writes, so it uses the owner
connection (the same one migrations use); it is the only writer of the ``status`` schema.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import asyncpg

from ledgermirror.db.connections import ConnectionSet, connection_set
from ledgermirror.db.sql import template

Conn: TypeAlias = "asyncpg.Connection[Any]"
"""A connection, of a :class:`ConnectionSet` or alone (the command line's)."""

ACQUIRE_SECONDS = 5.0
"""The longest a request waits for a connection (then ``503``), as long as a statement may run."""

PUBLIC_TABLES = (
    "page",
    "component",
    "component_status_history",
    "incident",
    "incident_update",
    "incident_component",
)


async def execute(conn: Conn, text: str, **values: Any) -> None:
    """Run a statement whose parameters are named ``{markers}`` (``db.sql.template``)."""
    statement = template(text, **values)
    await conn.execute(statement.text, *statement.args)


async def fetch(conn: Conn, text: str, **values: Any) -> list[asyncpg.Record]:
    statement = template(text, **values)
    return list(await conn.fetch(statement.text, *statement.args))


async def fetchrow(conn: Conn, text: str, **values: Any) -> asyncpg.Record | None:
    statement = template(text, **values)
    row: asyncpg.Record | None = await conn.fetchrow(statement.text, *statement.args)
    return row


async def fetchval(conn: Conn, text: str, **values: Any) -> Any:
    statement = template(text, **values)
    return await conn.fetchval(statement.text, *statement.args)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def grant_read_access(conn: Conn, role: str) -> bool:
    """Let the read-only role read the public tables of ``status``. False when the role does not exist."""
    if not await fetchval(conn, "select true from pg_roles where rolname = {role}", role=role):
        return False
    quoted = _quote(role)
    await conn.execute(f"grant usage on schema status to {quoted}")
    tables = ", ".join(f"status.{table}" for table in PUBLIC_TABLES)
    await conn.execute(f"grant select on {tables} to {quoted}")
    return True


def session_settings(*, read_only: bool) -> dict[str, str]:
    """The PostgreSQL settings of the status service's sessions: named, a 5 s statement budget, and read-only
    transactions for the public endpoints' connections."""
    settings = {"application_name": "ledgermirror-status", "statement_timeout": "5000"}
    if read_only:
        settings["default_transaction_read_only"] = "on"
    return settings


def status_connections(url: str, *, size: int, read_only: bool, max_idle_seconds: float) -> ConnectionSet:
    """The status service's connections to ``url`` (:func:`~ledgermirror.db.connections.connection_set`)."""
    return connection_set(
        url, size=size, session=session_settings(read_only=read_only), max_idle_seconds=max_idle_seconds
    )
