"""Management of incidents: open, update, resolve, postmortem. Component changes are recorded in the update's
``affected_components`` and in the status history; the impact follows the affected components unless overridden.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg
import orjson

from ledgermirror.status import audit, fields, rollup
from ledgermirror.status.components_ops import set_status
from ledgermirror.status.db import Conn, execute, fetch, fetchrow
from ledgermirror.status.errors import Conflict, InvalidInput, NotFound
from ledgermirror.status.model import IMPACTS, INCIDENT_STATES, OPERATIONAL, UNRESOLVED_INCIDENT_STATES
from ledgermirror.status.wire import new_id

DEFAULT_BODIES = {
    "investigating": "We are investigating this issue.",
    "identified": "The issue has been identified and a fix is being implemented.",
    "monitoring": "A fix has been implemented and we are monitoring the results.",
    "resolved": "This incident has been resolved.",
}

OPEN_FIELDS: dict[str, fields.Check] = {
    "name": fields.text,
    "status": fields.one_of(*UNRESOLVED_INCIDENT_STATES),
    "body": fields.text,
    "components": fields.component_statuses,
    "impact_override": fields.optional(fields.one_of(*IMPACTS)),
    "started_at": fields.timestamp,
    "deliver_notifications": fields.boolean,
}
UPDATE_FIELDS: dict[str, fields.Check] = {
    "name": fields.text,
    "status": fields.one_of(*UNRESOLVED_INCIDENT_STATES, "resolved"),
    "body": fields.text,
    "components": fields.component_statuses,
    "impact_override": fields.optional(fields.one_of(*IMPACTS)),
    "deliver_notifications": fields.boolean,
}
RESOLVE_FIELDS: dict[str, fields.Check] = {
    "body": fields.text,
    "restore_components": fields.boolean,
    "deliver_notifications": fields.boolean,
}
POSTMORTEM_FIELDS: dict[str, fields.Check] = {"body": fields.text, "deliver_notifications": fields.boolean}

INSERT_SQL = """
insert into status.incident (id, kind, name, status, impact, impact_override, created_at, updated_at, started_at,
                             monitoring_at, scheduled_for, scheduled_until, auto_in_progress, auto_completed)
values ({id}, {kind}, {name}, {status}, {impact}, {impact_override}, {now}, {now}, {started_at}, {monitoring_at},
        {scheduled_for}, {scheduled_until}, {auto_in_progress}, {auto_completed})
"""
ROW_SQL = "select * from status.incident where id = {id} and kind = {kind} for update"
UPDATE_INSERT_SQL = """
insert into status.incident_update (id, incident_id, status, body, created_at, updated_at, display_at,
                                    affected_components, deliver_notifications)
values ({id}, {incident_id}, {status}, {body}, {now}, {now}, {now}, {affected}::jsonb, {notify})
on conflict (id) do nothing
"""
LINK_SQL = "insert into status.incident_component values ({incident_id}, {component_id}) on conflict do nothing"
UNLINK_SQL = "delete from status.incident_component where incident_id = {incident_id}"
LINKED_SQL = """
select c.id, c.name, c.status, g.name as group_name
from status.incident_component l join status.component c on c.id = l.component_id
left join status.component g on g.id = c.group_id
where l.incident_id = {incident_id} order by c.position, c.id
"""
NAME_SQL = """
select c.name, g.name as group_name from status.component c left join status.component g on g.id = c.group_id
where c.id = {id}
"""
SET_SQL = """
update status.incident set name = {name}, status = {status}, impact = {impact}, impact_override = {override},
       updated_at = {now}, monitoring_at = {monitoring_at}, resolved_at = {resolved_at}
where id = {id}
"""


async def load(conn: Conn, incident_id: str, kind: str) -> asyncpg.Record:
    row = await fetchrow(conn, ROW_SQL, id=incident_id, kind=kind)
    if row is None:
        raise NotFound(f"no {kind} {incident_id}")
    found: asyncpg.Record = row
    return found


async def add_update(
    conn: Conn,
    incident_id: str,
    status: str,
    body: str,
    now: dt.datetime,
    *,
    affected: list[dict[str, str]] | None,
    notify: bool = True,
    update_id: str | None = None,
) -> str:
    update_id = update_id or new_id()
    payload = None if not affected else orjson.dumps(affected).decode()
    await execute(
        conn,
        UPDATE_INSERT_SQL,
        id=update_id,
        incident_id=incident_id,
        status=status,
        body=body,
        now=now,
        affected=payload,
        notify=notify,
    )
    return update_id


async def _display_name(conn: Conn, component_id: str) -> str:
    row = await fetchrow(conn, NAME_SQL, id=component_id)
    assert row is not None
    return f"{row['group_name']} - {row['name']}" if row["group_name"] else str(row["name"])


async def apply_components(
    conn: Conn, incident_id: str, changes: dict[str, str], now: dt.datetime
) -> list[dict[str, str]]:
    """Set component statuses for an incident; link them; return the ``affected_components`` entries."""
    affected: list[dict[str, str]] = []
    for component_id, new in changes.items():
        old = await set_status(conn, component_id, new, now, incident_id)
        await execute(conn, LINK_SQL, incident_id=incident_id, component_id=component_id)
        name = await _display_name(conn, component_id)
        affected.append({"code": component_id, "name": name, "old_status": old, "new_status": new})
    return affected


async def _impact(conn: Conn, incident_id: str, override: str | None, peak: str) -> str:
    statuses = [row["status"] for row in await fetch(conn, LINKED_SQL, incident_id=incident_id)]
    return rollup.incident_impact(statuses, override, peak)


async def open_incident(conn: Conn, data: Any, now: dt.datetime, actor: str) -> str:
    values = fields.parse(data, OPEN_FIELDS, required=("name",))
    status = values.get("status", "investigating")
    incident_id = new_id()
    async with conn.transaction():
        await execute(
            conn,
            INSERT_SQL,
            id=incident_id,
            kind="incident",
            name=values["name"],
            status=status,
            impact="none",
            impact_override=values.get("impact_override"),
            now=now,
            started_at=values.get("started_at", now),
            monitoring_at=now if status == "monitoring" else None,
            scheduled_for=None,
            scheduled_until=None,
            auto_in_progress=True,
            auto_completed=True,
        )
        affected = await apply_components(conn, incident_id, values.get("components", {}), now)
        impact = await _impact(conn, incident_id, values.get("impact_override"), "none")
        await execute(
            conn, "update status.incident set impact = {impact} where id = {id}", id=incident_id, impact=impact
        )
        body = values.get("body", DEFAULT_BODIES[status])
        await add_update(
            conn,
            incident_id,
            status,
            body,
            now,
            affected=affected,
            notify=values.get("deliver_notifications", True),
        )
        await audit.record(conn, now, actor, "incident.open", "incident", target_id=incident_id, details=values)
    return incident_id


async def _change(
    conn: Conn,
    incident_id: str,
    values: dict[str, Any],
    now: dt.datetime,
    actor: str,
    *,
    action: str,
    restore: bool = False,
) -> None:
    row = await load(conn, incident_id, "incident")
    status = values.get("status", row["status"])
    if row["status"] in ("resolved", "postmortem") and status in UNRESOLVED_INCIDENT_STATES:
        raise InvalidInput(f"incident {incident_id} is {row['status']}; open a new incident instead")
    changes: dict[str, str] = dict(values.get("components", {}))
    if restore:
        for linked in await fetch(conn, LINKED_SQL, incident_id=incident_id):
            if linked["status"] != OPERATIONAL and linked["id"] not in changes:
                changes[linked["id"]] = OPERATIONAL
    affected = await apply_components(conn, incident_id, changes, now)
    override = values["impact_override"] if "impact_override" in values else row["impact_override"]
    peak = row["impact"] if row["impact_override"] is None else "none"
    impact = await _impact(conn, incident_id, override, peak)
    monitoring_at = row["monitoring_at"] or (now if status == "monitoring" else None)
    resolved_at = row["resolved_at"] or (now if status in ("resolved", "postmortem") else None)
    name = values.get("name", row["name"])
    await execute(
        conn,
        SET_SQL,
        id=incident_id,
        name=name,
        status=status,
        impact=impact,
        override=override,
        now=now,
        monitoring_at=monitoring_at,
        resolved_at=resolved_at,
    )
    if "body" in values or status != row["status"] or affected:
        body = values.get("body") or DEFAULT_BODIES.get(status, "")
        await add_update(
            conn,
            incident_id,
            status,
            body,
            now,
            affected=affected,
            notify=values.get("deliver_notifications", True),
        )
    await audit.record(conn, now, actor, action, "incident", target_id=incident_id, details=values)


async def update_incident(conn: Conn, incident_id: str, data: Any, now: dt.datetime, actor: str) -> None:
    values = fields.parse(data, UPDATE_FIELDS)
    async with conn.transaction():
        await _change(conn, incident_id, values, now, actor, action="incident.update")


def _refuse_if_finished(incident_id: str, row: asyncpg.Record, *finished: str) -> None:
    """A resolve (or postmortem) of an incident already in that state is refused with 409, not repeated: a
    second one would add a duplicate entry to the public timeline (and a retry learns it already happened)."""
    if row["status"] in finished:
        raise Conflict(f"incident {incident_id} is already {row['status']}")


async def resolve_incident(conn: Conn, incident_id: str, data: Any, now: dt.datetime, actor: str) -> None:
    """Resolve; the affected components go back to operational unless ``restore_components`` is false."""
    values = fields.parse(data, RESOLVE_FIELDS)
    restore = values.pop("restore_components", True)
    async with conn.transaction():
        _refuse_if_finished(incident_id, await load(conn, incident_id, "incident"), "resolved", "postmortem")
        await _change(
            conn,
            incident_id,
            {**values, "status": "resolved"},
            now,
            actor,
            action="incident.resolve",
            restore=restore,
        )


async def write_postmortem(conn: Conn, incident_id: str, data: Any, now: dt.datetime, actor: str) -> None:
    values = fields.parse(data, POSTMORTEM_FIELDS, required=("body",))
    async with conn.transaction():
        row = await load(conn, incident_id, "incident")
        _refuse_if_finished(incident_id, row, "postmortem")
        if row["status"] != "resolved":
            raise InvalidInput(f"incident {incident_id} is not resolved yet")
        await _change(
            conn, incident_id, {**values, "status": "postmortem"}, now, actor, action="incident.postmortem"
        )


assert set(DEFAULT_BODIES) <= set(INCIDENT_STATES)
