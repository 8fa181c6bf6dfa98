"""The audit log: who changed what, when. Every management change writes one row in its own transaction."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson

from ledgermirror.status.db import Conn, execute, fetch

INSERT_SQL = """
insert into status.audit_log (at, actor, action, target_type, target_id, details)
values ({at}, {actor}, {action}, {target_type}, {target_id}, {details}::jsonb)
"""

LIST_SQL = """
select id, at, actor, action, target_type, target_id, details from status.audit_log
order by id desc limit {limit}
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
    await execute(
        conn,
        INSERT_SQL,
        at=at,
        actor=actor,
        action=action,
        target_type=target_type,
        target_id=target_id,
        details=orjson.dumps(details, default=str).decode(),
    )


async def recent(conn: Conn, limit: int = 100) -> list[dict[str, Any]]:
    rows = await fetch(conn, LIST_SQL, limit=limit)
    return [{**dict(row), "details": orjson.loads(row["details"])} for row in rows]
