"""Snapshot + "now" -> the Statuspage v2 objects (page, components, incidents, maintenances, status).

Everything time-dependent (maintenance states, components under maintenance) is derived here from the
snapshot and the injected clock's reading, so the eight endpoints always agree with one another.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ledgermirror.status import maintenance, rollup
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.model import OPERATIONAL, UNDER_MAINTENANCE, UNRESOLVED_INCIDENT_STATES
from ledgermirror.status.store import RECENT, Snapshot
from ledgermirror.status.wire import date, timestamp

JsonObject = dict[str, Any]


@dataclass(slots=True)
class View:
    page: JsonObject
    components: list[JsonObject]
    incidents: list[JsonObject]
    maintenances: list[JsonObject]
    status: JsonObject

    def payload(self, name: str) -> JsonObject:
        """The body of one of the eight endpoints, by its path under ``/api/v2``."""
        unresolved = [item for item in self.incidents if item["status"] in UNRESOLVED_INCIDENT_STATES]
        if name == "summary.json":
            open_ones = [item for item in self.maintenances if maintenance.is_open(item["status"])]
            return {
                "page": self.page,
                "components": self.components,
                "incidents": unresolved,
                "scheduled_maintenances": open_ones,
                "status": self.status,
            }
        if name == "status.json":
            return {"page": self.page, "status": self.status}
        if name == "components.json":
            return {"page": self.page, "components": self.components}
        if name == "incidents.json":
            return {"page": self.page, "incidents": self.incidents[:RECENT]}
        if name == "incidents/unresolved.json":
            return {"page": self.page, "incidents": unresolved}
        if name == "scheduled-maintenances.json":
            return {"page": self.page, "scheduled_maintenances": self.maintenances[:RECENT]}
        if name == "scheduled-maintenances/upcoming.json":
            chosen = [item for item in self.maintenances if maintenance.is_upcoming(item["status"])]
        elif name == "scheduled-maintenances/active.json":
            chosen = [item for item in self.maintenances if maintenance.is_active(item["status"])]
        else:
            raise KeyError(name)
        return {"page": self.page, "scheduled_maintenances": chosen}


ENDPOINTS = (
    "summary.json",
    "status.json",
    "components.json",
    "incidents.json",
    "incidents/unresolved.json",
    "scheduled-maintenances.json",
    "scheduled-maintenances/upcoming.json",
    "scheduled-maintenances/active.json",
)


def _window(row: dict[str, Any]) -> maintenance.Window:
    return maintenance.Window(
        row["id"],
        row["status"],
        row["scheduled_for"],
        row["scheduled_until"],
        row["auto_in_progress"],
        row["auto_completed"],
    )


def build(snapshot: Snapshot, now: dt.datetime, settings: StatusSettings) -> View:
    zone = settings.time_zone
    moves = {
        row["id"]: maintenance.transitions(_window(row), now)
        for row in snapshot.incidents
        if row["kind"] == "maintenance"
    }
    maintained = _under_maintenance(snapshot, moves)
    by_id: dict[str, JsonObject] = {}
    children: dict[str, list[str]] = {}
    for row in snapshot.components:
        if row["group_id"] is not None:
            children.setdefault(row["group_id"], []).append(row["id"])
    ordered = sorted(
        snapshot.components,
        key=lambda row: (row["position"], row["group_id"] is not None, row["created_at"], row["id"]),
    )
    updated: dict[str, dt.datetime] = {}
    for row in ordered:
        if row["is_group"]:
            continue
        status, changed = row["status"], row["updated_at"]
        if row["id"] in maintained:
            status = rollup.effective_component_status(status, True)
            changed = max(changed, maintained[row["id"]])
        if status == UNDER_MAINTENANCE and not settings.superset:
            status = OPERATIONAL
        updated[row["id"]] = changed
        by_id[row["id"]] = _component(row, status, changed, snapshot.page_id, zone)
    for row in ordered:
        if not row["is_group"]:
            continue
        kids = [kid for kid in children.get(row["id"], []) if kid in by_id]
        status = rollup.group_status([by_id[kid]["status"] for kid in kids])
        changed = max([row["updated_at"], *(updated[kid] for kid in kids)])
        kid_order = sorted(kids, key=lambda kid: (by_id[kid]["position"], kid))
        by_id[row["id"]] = _component(row, status, changed, snapshot.page_id, zone, kids=kid_order)
    components = [by_id[row["id"]] for row in ordered]
    incidents: list[JsonObject] = []
    maintenances: list[JsonObject] = []
    for row in snapshot.incidents:
        affected = [by_id[cid] for cid in snapshot.links.get(row["id"], []) if cid in by_id]
        affected.sort(key=lambda item: (item["position"], item["id"]))
        if row["kind"] == "maintenance":
            maintenances.append(_maintenance(row, moves[row["id"]], affected, snapshot, settings=settings))
        else:
            incidents.append(_incident(row, row["status"], affected, snapshot, settings, synthetic=[]))
    incidents.sort(key=lambda item: (item["_sort"], item["id"]), reverse=True)
    maintenances.sort(key=lambda item: (item["_sort"], item["id"]), reverse=True)
    for item in (*incidents, *maintenances):
        del item["_sort"]
    leaf_statuses = [item["status"] for item in components if not item["group"]]
    impacts = [item["impact"] for item in incidents if item["status"] in UNRESOLVED_INCIDENT_STATES]
    overall = rollup.overall(leaf_statuses, impacts, superset=settings.superset)
    stamps = [snapshot.page_created_at, *updated.values()]
    stamps += [row["updated_at"] for row in snapshot.components]
    stamps += [row["updated_at"] for row in snapshot.incidents]
    stamps += [move.at for items in moves.values() for move in items]
    page = {
        "id": snapshot.page_id,
        "name": settings.page_name,
        "url": settings.public_url,
        "time_zone": zone,
        "updated_at": timestamp(max(stamps), zone),
    }
    status = {"indicator": overall.indicator, "description": overall.description}
    return View(page, components, incidents, maintenances, status)


def _under_maintenance(
    snapshot: Snapshot, moves: dict[str, list[maintenance.Transition]]
) -> dict[str, dt.datetime]:
    """Component id -> since when it is under an in-progress maintenance (groups stand for their children)."""
    found: dict[str, dt.datetime] = {}
    members: dict[str, list[str]] = {}
    for row in snapshot.components:
        if row["group_id"] is not None:
            members.setdefault(row["group_id"], []).append(row["id"])
    for row in snapshot.incidents:
        if row["kind"] != "maintenance":
            continue
        history = moves[row["id"]]
        state = history[-1].status if history else row["status"]
        if state != "in_progress":
            continue
        since = history[-1].at if history else row["updated_at"]
        for cid in snapshot.links.get(row["id"], []):
            for member in [cid, *members.get(cid, [])]:
                found[member] = min(found.get(member, since), since)
    return found


def _component(
    row: dict[str, Any],
    status: str,
    changed: dt.datetime,
    page_id: str,
    zone: str,
    *,
    kids: list[str] | None = None,
) -> JsonObject:
    item: JsonObject = {
        "id": row["id"],
        "name": row["name"],
        "status": status,
        "created_at": timestamp(row["created_at"], zone),
        "updated_at": timestamp(changed, zone),
        "position": row["position"],
        "description": row["description"],
        "showcase": row["showcase"],
        "start_date": date(row["start_date"]),
        "group_id": row["group_id"],
        "page_id": page_id,
        "group": row["is_group"],
        "only_show_if_degraded": row["only_show_if_degraded"],
    }
    if kids is not None:
        item["components"] = kids
    return item


def _update(row: dict[str, Any], zone: str) -> JsonObject:
    return {
        "id": row["id"],
        "status": row["status"],
        "body": row["body"],
        "incident_id": row["incident_id"],
        "created_at": timestamp(row["created_at"], zone),
        "updated_at": timestamp(row["updated_at"], zone),
        "display_at": timestamp(row["display_at"], zone),
        "affected_components": row["affected_components"],
        "deliver_notifications": row["deliver_notifications"],
        "custom_tweet": None,
        "tweet_id": None,
    }


def _incident(
    row: dict[str, Any],
    status: str,
    affected: list[JsonObject],
    snapshot: Snapshot,
    settings: StatusSettings,
    *,
    synthetic: list[dict[str, Any]],
) -> JsonObject:
    zone = settings.time_zone
    rows = [*snapshot.updates.get(row["id"], []), *synthetic]
    rows.sort(key=lambda update: (update["display_at"], update["seq"]), reverse=True)
    latest = max([row["updated_at"], *(update["updated_at"] for update in synthetic)])
    resolved_at = row["resolved_at"]
    if resolved_at is None and status == "completed" and synthetic:
        resolved_at = synthetic[-1]["created_at"]
    return {
        "id": row["id"],
        "name": row["name"],
        "status": status,
        "created_at": timestamp(row["created_at"], zone),
        "updated_at": timestamp(latest, zone),
        "monitoring_at": timestamp(row["monitoring_at"], zone),
        "resolved_at": timestamp(resolved_at, zone),
        "impact": row["impact"],
        "shortlink": row["shortlink"] or f"{settings.public_url.rstrip('/')}/incidents/{row['id']}",
        "started_at": timestamp(row["started_at"], zone),
        "page_id": snapshot.page_id,
        "incident_updates": [_update(update, zone) for update in rows],
        "components": affected,
        "_sort": row["created_at"] if row["kind"] == "incident" else row["scheduled_for"],
    }


def _maintenance(
    row: dict[str, Any],
    moves: list[maintenance.Transition],
    affected: list[JsonObject],
    snapshot: Snapshot,
    *,
    settings: StatusSettings,
) -> JsonObject:
    synthetic = [
        {
            "id": move.id,
            "incident_id": row["id"],
            "status": move.status,
            "body": maintenance.AUTO_BODIES[move.status],
            "created_at": move.at,
            "updated_at": move.at,
            "display_at": move.at,
            "affected_components": None,
            "deliver_notifications": False,
            "seq": -1,
        }
        for move in moves
    ]
    status = moves[-1].status if moves else row["status"]
    item = _incident(row, status, affected, snapshot, settings, synthetic=synthetic)
    item["scheduled_for"] = timestamp(row["scheduled_for"], settings.time_zone)
    item["scheduled_until"] = timestamp(row["scheduled_until"], settings.time_zone)
    return item
