"""The audit log: who changed what, when. Every management change writes one row in its own transaction."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson

from ledgermirror.status.db import Conn

INSERT_SQL = """
insert into status.audit_log (at, actor, action, target_type, target_id, details)
values ($1, $2, $3, $4, $5, $6::jsonb)
"""

LIST_SQL = """
select id, at, actor, action, target_type, target_id, details from status.audit_log
order by id desc limit $1
"""


async def record(
    conn: Conn,
    at: dt.datetime,
    actor: str,
    action: str,
    target_type: str,
    *,
    target_id: str | None,
    details: dict[str, Any],
) -> None:
    await conn.execute(
        INSERT_SQL, at, actor, action, target_type, target_id, orjson.dumps(details, default=str).decode()
    )


async def recent(conn: Conn, limit: int = 100) -> list[dict[str, Any]]:
    rows = await conn.fetch(LIST_SQL, limit)
    return [{**dict(row), "details": orjson.loads(row["details"])} for row in rows]
