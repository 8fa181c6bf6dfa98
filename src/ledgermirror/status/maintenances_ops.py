"""Management of scheduled maintenances: schedule, update, cancel.

Before any change the automatic moves that have already happened (see :mod:`maintenance`) are written down as
real updates with the same ids they were shown with, so the public timeline never loses a step.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg

from ledgermirror.status import audit, fields, maintenance
from ledgermirror.status.db import Conn, execute, fetchval
from ledgermirror.status.errors import InvalidInput
from ledgermirror.status.incidents_ops import INSERT_SQL, LINK_SQL, UNLINK_SQL, add_update, load
from ledgermirror.status.model import MAINTENANCE_STATES
from ledgermirror.status.wire import new_id

SCHEDULE_FIELDS: dict[str, fields.Check] = {
    "name": fields.text,
    "scheduled_for": fields.timestamp,
    "scheduled_until": fields.timestamp,
    "body": fields.text,
    "components": fields.ident_list,
    "auto_in_progress": fields.boolean,
    "auto_completed": fields.boolean,
    "deliver_notifications": fields.boolean,
}
UPDATE_FIELDS: dict[str, fields.Check] = {**SCHEDULE_FIELDS, "status": fields.one_of(*MAINTENANCE_STATES)}
CANCEL_FIELDS: dict[str, fields.Check] = {"body": fields.text, "deliver_notifications": fields.boolean}

SCHEDULED_BODY = "Scheduled maintenance."
CANCELLED_BODY = "This scheduled maintenance has been cancelled."
COMPONENT_EXISTS_SQL = "select true from status.component where id = {id}"
SET_SQL = """
update status.incident set name = {name}, status = {status}, scheduled_for = {start}, scheduled_until = {end},
       started_at = {start}, auto_in_progress = {auto_in_progress}, auto_completed = {auto_completed},
       updated_at = {now}, resolved_at = {resolved_at}, cancelled_at = {cancelled_at}
where id = {id}
"""


def _check_window(start: dt.datetime, end: dt.datetime) -> None:
    if end < start:
        raise InvalidInput("scheduled_until must not be before scheduled_for")


async def _link(conn: Conn, maintenance_id: str, components: list[str]) -> None:
    for component_id in components:
        if not await fetchval(conn, COMPONENT_EXISTS_SQL, id=component_id):
            raise InvalidInput(f"no component {component_id}")
        await execute(conn, LINK_SQL, incident_id=maintenance_id, component_id=component_id)


async def schedule(conn: Conn, data: Any, now: dt.datetime, actor: str) -> str:
    values = fields.parse(data, SCHEDULE_FIELDS, required=("name", "scheduled_for", "scheduled_until"))
    _check_window(values["scheduled_for"], values["scheduled_until"])
    maintenance_id = new_id()
    async with conn.transaction():
        await execute(
            conn,
            INSERT_SQL,
            id=maintenance_id,
            kind="maintenance",
            name=values["name"],
            status="scheduled",
            impact="maintenance",
            impact_override=None,
            now=now,
            started_at=values["scheduled_for"],
            monitoring_at=None,
            scheduled_for=values["scheduled_for"],
            scheduled_until=values["scheduled_until"],
            auto_in_progress=values.get("auto_in_progress", True),
            auto_completed=values.get("auto_completed", True),
        )
        await _link(conn, maintenance_id, values.get("components", []))
        body = values.get("body", SCHEDULED_BODY)
        await add_update(
            conn,
            maintenance_id,
            "scheduled",
            body,
            now,
            affected=None,
            notify=values.get("deliver_notifications", True),
        )
        await audit.record(
            conn, now, actor, "maintenance.schedule", "maintenance", target_id=maintenance_id, details=values
        )
    return maintenance_id


async def _materialise(conn: Conn, row: asyncpg.Record, now: dt.datetime) -> tuple[str, int]:
    """Write the automatic moves made so far as updates; return the current (effective) status and how many
    automatic moves were written."""
    window = maintenance.Window(
        row["id"],
        row["status"],
        row["scheduled_for"],
        row["scheduled_until"],
        row["auto_in_progress"],
        row["auto_completed"],
    )
    moves = maintenance.transitions(window, now)
    for move in moves:
        body = maintenance.AUTO_BODIES[move.status]
        await add_update(
            conn, row["id"], move.status, body, move.at, affected=None, notify=False, update_id=move.id
        )
    return (moves[-1].status if moves else str(row["status"])), len(moves)


async def _change(
    conn: Conn, maintenance_id: str, values: dict[str, Any], now: dt.datetime, cancel: bool = False
) -> int:
    """Apply a change; return the automatic moves written down first."""
    row = await load(conn, maintenance_id, "maintenance")
    current, automatic = await _materialise(conn, row, now)
    if current == "completed" and (cancel or values.get("status", "completed") != "completed"):
        raise InvalidInput(f"maintenance {maintenance_id} is already completed")
    status = "completed" if cancel else values.get("status", current)
    start = values.get("scheduled_for", row["scheduled_for"])
    end = values.get("scheduled_until", row["scheduled_until"])
    _check_window(start, end)
    resolved_at = now if status == "completed" else None
    await execute(
        conn,
        SET_SQL,
        id=maintenance_id,
        name=values.get("name", row["name"]),
        status=status,
        start=start,
        end=end,
        auto_in_progress=values.get("auto_in_progress", row["auto_in_progress"]),
        auto_completed=values.get("auto_completed", row["auto_completed"]),
        now=now,
        resolved_at=resolved_at,
        cancelled_at=now if cancel else None,
    )
    if "components" in values:
        await execute(conn, UNLINK_SQL, incident_id=maintenance_id)
        await _link(conn, maintenance_id, values["components"])
    if "body" in values or status != current or cancel:
        body = values.get("body") or (
            CANCELLED_BODY if cancel else maintenance.AUTO_BODIES.get(status, SCHEDULED_BODY)
        )
        await add_update(
            conn,
            maintenance_id,
            status,
            body,
            now,
            affected=None,
            notify=values.get("deliver_notifications", True),
        )
    return automatic


async def update_maintenance(conn: Conn, maintenance_id: str, data: Any, now: dt.datetime, actor: str) -> int:
    """Returns the automatic moves written down before the change (the status metrics count them)."""
    values = fields.parse(data, UPDATE_FIELDS)
    async with conn.transaction():
        automatic = await _change(conn, maintenance_id, values, now)
        await audit.record(
            conn, now, actor, "maintenance.update", "maintenance", target_id=maintenance_id, details=values
        )
    return automatic


async def cancel(conn: Conn, maintenance_id: str, data: Any, now: dt.datetime, actor: str) -> int:
    """Statuspage has no cancelled state: a cancelled maintenance is completed with an update saying so.
    Returns the automatic moves written down before the change."""
    values = fields.parse(data, CANCEL_FIELDS)
    async with conn.transaction():
        automatic = await _change(conn, maintenance_id, values, now, cancel=True)
        await audit.record(
            conn, now, actor, "maintenance.cancel", "maintenance", target_id=maintenance_id, details=values
        )
    return automatic
