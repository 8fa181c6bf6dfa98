"""One consistent read of everything the public endpoints show (a repeatable-read, read-only transaction)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import orjson

from ledgermirror.status.db import Conn, fetch

RECENT = 50
"""incidents.json and scheduled-maintenances.json list the 50 most recent."""

PAGE_SQL = "select id, created_at from status.page"

COMPONENTS_SQL = """
select id, name, description, is_group, group_id, position, status, showcase, only_show_if_degraded,
       start_date, created_at, updated_at, status_source, source_ref, auto_reason
from status.component
where not hidden
"""

_INCIDENT_COLUMNS = """id, kind, name, status, impact, shortlink, created_at, updated_at, started_at,
       monitoring_at, resolved_at, scheduled_for, scheduled_until, auto_in_progress, auto_completed"""

INCIDENTS_SQL = f"""
(select {_INCIDENT_COLUMNS} from status.incident where kind = 'incident'
 order by created_at desc, id desc limit {{recent}})
union
(select {_INCIDENT_COLUMNS} from status.incident
 where kind = 'incident' and status in ('investigating', 'identified', 'monitoring'))
union
(select {_INCIDENT_COLUMNS} from status.incident where kind = 'maintenance'
 order by scheduled_for desc, id desc limit {{recent}})
union
(select {_INCIDENT_COLUMNS} from status.incident
 where kind = 'maintenance' and status in ('scheduled', 'in_progress', 'verifying'))
"""

UPDATES_SQL = """
select id, seq, incident_id, status, body, created_at, updated_at, display_at, affected_components,
       deliver_notifications
from status.incident_update
where incident_id = any({ids}::text[])
"""

LINKS_SQL = (
    "select incident_id, component_id from status.incident_component where incident_id = any({ids}::text[])"
)


@dataclass(slots=True)
class Snapshot:
    page_id: str
    page_created_at: dt.datetime
    components: list[dict[str, Any]]
    incidents: list[dict[str, Any]]
    updates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    links: dict[str, list[str]] = field(default_factory=dict)


async def read_snapshot(conn: Conn) -> Snapshot:
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        page = await conn.fetchrow(PAGE_SQL)
        if page is None:
            raise RuntimeError("the status schema has no page row; run the migrations")
        components = [dict(row) for row in await conn.fetch(COMPONENTS_SQL)]
        incidents = [dict(row) for row in await fetch(conn, INCIDENTS_SQL, recent=RECENT)]
        ids = [row["id"] for row in incidents]
        updates: dict[str, list[dict[str, Any]]] = {}
        links: dict[str, list[str]] = {}
        if ids:
            for row in await fetch(conn, UPDATES_SQL, ids=ids):
                update = dict(row)
                raw = update["affected_components"]
                update["affected_components"] = None if raw is None else orjson.loads(raw)
                updates.setdefault(update["incident_id"], []).append(update)
            for row in await fetch(conn, LINKS_SQL, ids=ids):
                links.setdefault(row["incident_id"], []).append(row["component_id"])
    return Snapshot(page["id"], page["created_at"], components, incidents, updates, links)
