"""The Statuspage v1 management API's objects: components, component groups, incidents (maintenances are
incidents with scheduled fields), incident updates and the page, rendered from the same rows and the same
:func:`.render.build` as the v2 JSON (so v1 and v2 are two views of one state), with the fields v1 adds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import orjson

from ledgermirror.status import render
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import Conn, fetch
from ledgermirror.status.store import LINKS_SQL, PAGE_SQL, UPDATES_SQL, Snapshot
from ledgermirror.status.wire import timestamp

JsonObject = dict[str, Any]

COMPONENTS_SQL = """
select id, name, description, is_group, group_id, position, status, showcase, only_show_if_degraded,
       start_date, created_at, updated_at, status_source, auto_reason
from status.component
where deleted_at is null
"""
INCIDENT_COLUMNS = """id, kind, name, status, impact, impact_override, shortlink, created_at, updated_at,
       started_at,
       monitoring_at, resolved_at, scheduled_for, scheduled_until, auto_in_progress, auto_completed"""
BY_IDS_SQL = f"select {INCIDENT_COLUMNS} from status.incident where id = any({{ids}}::text[])"
POSTMORTEM_SQL = """
select incident_id, body, created_at from status.incident_update
where incident_id = any({ids}::text[]) and status = 'postmortem'
"""


@dataclass(slots=True)
class V1View:
    page_id: str
    components: dict[str, JsonObject]
    """Every component and group (v2 shape: :func:`component` and :func:`group` make the v1 ones), by id."""
    incidents: dict[str, JsonObject]
    """The incidents asked for (v1 shape), by id."""
    ordered_components: list[str]


async def read(conn: Conn, now: dt.datetime, settings: StatusSettings, incident_ids: list[str]) -> V1View:
    """Every component, and the incidents ``incident_ids``, read in one repeatable-read transaction."""
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        page = await conn.fetchrow(PAGE_SQL)
        if page is None:
            raise RuntimeError("the status schema has no page row; run the migrations")
        components = [dict(row) for row in await conn.fetch(COMPONENTS_SQL)]
        rows = [dict(row) for row in await fetch(conn, BY_IDS_SQL, ids=incident_ids)] if incident_ids else []
        updates: dict[str, list[dict[str, Any]]] = {}
        links: dict[str, list[str]] = {}
        postmortems: dict[str, Any] = {}
        if rows:
            for row in await fetch(conn, UPDATES_SQL, ids=incident_ids):
                update = dict(row)
                raw = update["affected_components"]
                update["affected_components"] = None if raw is None else orjson.loads(raw)
                updates.setdefault(update["incident_id"], []).append(update)
            for row in await fetch(conn, LINKS_SQL, ids=incident_ids):
                links.setdefault(row["incident_id"], []).append(row["component_id"])
            for row in await fetch(conn, POSTMORTEM_SQL, ids=incident_ids):
                postmortems[row["incident_id"]] = row
    snapshot = Snapshot(page["id"], page["created_at"], components, rows, updates, links)
    view = render.build(snapshot, now, settings)
    zone = settings.time_zone
    by_row = {row["id"]: row for row in rows}
    result = {}
    for item in [*view.incidents, *view.maintenances]:
        result[item["id"]] = incident(item, by_row[item["id"]], postmortems.get(item["id"]), zone)
    listed = {item["id"]: item for item in view.components}
    return V1View(page["id"], listed, result, [item["id"] for item in view.components])


def component(item: JsonObject) -> JsonObject:
    """A v2 component (or group row) as v1 shows it."""
    return {**{key: value for key, value in item.items() if key != "components"}, "automation_email": ""}


def group(item: JsonObject) -> JsonObject:
    """A group row as v1's ``GroupComponent``."""
    return {
        "id": item["id"],
        "page_id": item["page_id"],
        "name": item["name"],
        "description": item["description"],
        "components": list(item.get("components", [])),
        "position": item["position"],
        "created_at": item["created_at"],
        "updated_at": item["updated_at"],
    }


def incident(item: JsonObject, row: dict[str, Any], postmortem: Any, zone: str) -> JsonObject:
    """A v2 incident or maintenance as v1 shows it (scheduled fields null for a realtime incident)."""
    scheduled = row["kind"] == "maintenance"
    result = {key: value for key, value in item.items() if not key.startswith("_")}
    result.update(
        {
            "impact_override": row["impact_override"],
            "metadata": {},
            "scheduled_for": item.get("scheduled_for"),
            "scheduled_until": item.get("scheduled_until"),
            "scheduled_remind_prior": False,
            "scheduled_reminded_at": None,
            "scheduled_auto_in_progress": bool(row["auto_in_progress"]) if scheduled else False,
            "scheduled_auto_completed": bool(row["auto_completed"]) if scheduled else False,
            "auto_transition_to_maintenance_state": scheduled,
            "auto_transition_to_operational_state": False,
            "auto_transition_deliver_notifications_at_start": False,
            "auto_transition_deliver_notifications_at_end": False,
            "postmortem_body": None if postmortem is None else postmortem["body"],
            "postmortem_body_last_updated_at": None
            if postmortem is None
            else timestamp(postmortem["created_at"], zone),
            "postmortem_ignored": False,
            "postmortem_notified_subscribers": False,
            "postmortem_notified_twitter": False,
            "postmortem_published_at": None if postmortem is None else timestamp(postmortem["created_at"], zone),
        }
    )
    result["components"] = [component(part) for part in item["components"]]
    result["incident_updates"] = [
        {**update, "twitter_updated_at": None, "wants_twitter_update": False}
        for update in item["incident_updates"]
    ]
    return result


def page(page_id: str, created_at: dt.datetime, settings: StatusSettings) -> JsonObject:
    """The page as v1's ``Page`` (what this service knows of it; the rest null or false)."""
    at = timestamp(created_at, settings.time_zone)
    url = settings.public_url
    return {
        "id": page_id,
        "created_at": at,
        "updated_at": at,
        "name": settings.page_name,
        "page_description": None,
        "headline": None,
        "branding": "basic",
        "subdomain": None,
        "domain": None,
        "url": url,
        "support_url": None,
        "hidden_from_search": False,
        "allow_page_subscribers": False,
        "allow_incident_subscribers": False,
        "allow_email_subscribers": False,
        "allow_sms_subscribers": False,
        "allow_rss_atom_feeds": True,
        "allow_webhook_subscribers": False,
        "notifications_from_email": None,
        "notifications_email_footer": None,
        "activity_score": 0,
        "twitter_username": None,
        "viewers_must_be_team_members": False,
        "ip_restrictions": None,
        "city": None,
        "state": None,
        "country": None,
        "time_zone": settings.time_zone,
    }
