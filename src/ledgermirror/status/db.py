"""Connections of the status service, and the read-only role's access to the public tables of ``status``.

The public endpoints read through the mirror's read-only role (``mirror_api``): it gets ``select`` on the
tables the page shows, never on ``api_key`` or ``audit_log``. The management API writes, so it uses the owner
connection (the same one migrations use); it is the only writer of the ``status`` schema.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from ledgermirror.db.sql import template

Conn: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"
"""A connection, pooled or not."""

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


async def create_pool(dsn: str, *, max_size: int, read_only: bool) -> asyncpg.Pool:
    settings = {"application_name": "ledgermirror-status", "statement_timeout": "5000"}
    if read_only:
        settings["default_transaction_read_only"] = "on"
    pool = await asyncpg.create_pool(dsn, min_size=0, max_size=max_size, timeout=5, server_settings=settings)
    assert pool is not None
    return pool
