"""Automatic incidents (opt-in, ``LEDGERMIRROR_STATUS_AUTO_INCIDENTS``): when a rule moves a component to
partial or major outage an incident is opened for it (source ``auto:rule``, ``source_ref`` the component id),
each later automatic change of that component adds an update, and its recovery to operational resolves it.
Incidents people opened (source ``manual``) are never read or changed here."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ledgermirror.status import incidents_ops
from ledgermirror.status.db import Conn, execute, fetchval

if TYPE_CHECKING:
    from ledgermirror.status.automation import Change

SOURCE = "auto:rule"
OUTAGES = ("partial_outage", "major_outage")
OPEN_SQL = """
select id from status.incident
where kind = 'incident' and source = {source} and source_ref = {ref}
  and status in ('investigating', 'identified', 'monitoring')
"""
MARK_SQL = "update status.incident set source = {source}, source_ref = {ref} where id = {id}"


def _words(status: str) -> str:
    return status.replace("_", " ")


async def follow(conn: Conn, change: Change, now: dt.datetime, actor: str) -> str | None:
    """Open, update or resolve the component's automatic incident after ``change``; returns its id."""
    open_id = await fetchval(conn, OPEN_SQL, source=SOURCE, ref=change.component_id)
    reason = change.reason or f"{change.name} is {_words(change.new)}"
    if open_id is None:
        if change.new not in OUTAGES:
            return None
        data = {
            "name": f"{change.name}: {_words(change.new)}",
            "status": "investigating",
            "body": f"Opened by automated detection: {reason}.",
            "components": {change.component_id: change.new},
        }
        incident_id = await incidents_ops.open_incident(conn, data, now, actor)
        await execute(conn, MARK_SQL, source=SOURCE, ref=change.component_id, id=incident_id)
        return incident_id
    if change.new == "operational":
        body = f"Resolved by automated detection: {change.name} is operational again."
        await incidents_ops.update_incident(
            conn,
            open_id,
            {"status": "resolved", "body": body, "components": {change.component_id: "operational"}},
            now,
            actor,
        )
    else:
        body = f"Automated detection: {reason}."
        await incidents_ops.update_incident(
            conn, open_id, {"body": body, "components": {change.component_id: change.new}}, now, actor
        )
    return str(open_id)
