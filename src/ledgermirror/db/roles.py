"""The API's read-only role (``mirror_api`` by default, the name the reference's databases already use)."""

from __future__ import annotations

import logging

import asyncpg

from ledgermirror.db.sql import quote_identifier

_log = logging.getLogger(__name__)


async def ensure_api_role(conn: asyncpg.Connection, role: str) -> bool:
    """Create the role if missing and grant it read access to the public schema. False when not permitted."""
    quoted = quote_identifier(role)
    exists = await conn.fetchval("select true from pg_roles where rolname = $1", role)
    can_create = await conn.fetchval("select rolsuper or rolcreaterole from pg_roles where rolname = current_user")
    if not exists:
        if not can_create:
            _log.warning("cannot create the read-only API role", extra={"role": role})
            return False
        await conn.execute(f"create role {quoted} login")
    if can_create:
        await conn.execute(f"alter role {quoted} set default_transaction_read_only = on")
    await conn.execute(f"grant usage on schema public to {quoted}")
    await conn.execute(f"grant select on all tables in schema public to {quoted}")
    await conn.execute(f"alter default privileges in schema public grant select on tables to {quoted}")
    return True
