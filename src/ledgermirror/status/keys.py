"""Management API keys: ``lmst_<id>_<secret>``; only SHA-256 of the secret is stored, compared in constant time."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from ledgermirror.status import audit
from ledgermirror.status.db import Conn, execute, fetchrow, fetchval
from ledgermirror.status.errors import NotFound
from ledgermirror.status.wire import is_id, new_id

PREFIX = "lmst_"
_DUMMY_HASH = hashlib.sha256(b"no such key").hexdigest()

INSERT_SQL = (
    "insert into status.api_key (id, name, secret_hash, created_at) values ({id}, {name}, {secret_hash}, {now})"
)
LOOKUP_SQL = "select id, name, secret_hash, created_at, revoked_at from status.api_key where id = {id}"
REVOKE_SQL = "update status.api_key set revoked_at = {now} where id = {id} and revoked_at is null returning id"
LIST_SQL = "select id, name, created_at, revoked_at from status.api_key order by created_at, id"


@dataclass(frozen=True, slots=True)
class KeyInfo:
    id: str
    name: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


async def create(conn: Conn, name: str, now: dt.datetime, actor: str) -> tuple[str, str]:
    """A new key; returns ``(id, token)``. The token is shown once and never stored."""
    key_id, secret = new_id(), secrets.token_urlsafe(32)
    async with conn.transaction():
        await execute(conn, INSERT_SQL, id=key_id, name=name, secret_hash=_hash(secret), now=now)
        await audit.record(conn, now, actor, "key.create", "api_key", target_id=key_id, details={"name": name})
    return key_id, f"{PREFIX}{key_id}_{secret}"


async def revoke(conn: Conn, key_id: str, now: dt.datetime, actor: str) -> None:
    async with conn.transaction():
        if await fetchval(conn, REVOKE_SQL, id=key_id, now=now) is None:
            raise NotFound(f"no active key {key_id}")
        await audit.record(conn, now, actor, "key.revoke", "api_key", target_id=key_id, details={})


async def list_keys(conn: Conn) -> list[KeyInfo]:
    return [
        KeyInfo(row["id"], row["name"], row["created_at"], row["revoked_at"]) for row in await conn.fetch(LIST_SQL)
    ]


async def verify(conn: Conn, token: str) -> KeyInfo | None:
    """The active key a token belongs to, or None. The hash comparison runs whether or not the id exists."""
    key_id, secret = "", token
    if token.startswith(PREFIX) and len(token) > len(PREFIX) + 13:
        key_id, secret = token[len(PREFIX) : len(PREFIX) + 12], token[len(PREFIX) + 13 :]
    row = await fetchrow(conn, LOOKUP_SQL, id=key_id) if is_id(key_id) else None
    stored = row["secret_hash"] if row is not None else _DUMMY_HASH
    good = hmac.compare_digest(stored.encode(), _hash(secret).encode())
    if row is None or not good or row["revoked_at"] is not None:
        return None
    return KeyInfo(row["id"], row["name"], row["created_at"], None)
