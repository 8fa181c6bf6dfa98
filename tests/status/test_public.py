"""The eight public endpoints: shapes, formats, ordering, HTTP behaviour, and maintenances moving by time."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from tests.status.harness import Status

ENDPOINTS = {
    "summary.json": {"page", "components", "incidents", "scheduled_maintenances", "status"},
    "status.json": {"page", "status"},
    "components.json": {"page", "components"},
    "incidents.json": {"page", "incidents"},
    "incidents/unresolved.json": {"page", "incidents"},
    "scheduled-maintenances.json": {"page", "scheduled_maintenances"},
    "scheduled-maintenances/upcoming.json": {"page", "scheduled_maintenances"},
    "scheduled-maintenances/active.json": {"page", "scheduled_maintenances"},
}
PAGE_KEYS = {"id", "name", "url", "time_zone", "updated_at"}
COMPONENT_KEYS = {
    "id", "name", "status", "created_at", "updated_at", "position", "description", "showcase", "start_date",
    "group_id", "page_id", "group", "only_show_if_degraded",
}  # fmt: skip
INCIDENT_KEYS = {
    "id", "name", "status", "created_at", "updated_at", "monitoring_at", "resolved_at", "impact", "shortlink",
    "started_at", "page_id", "incident_updates", "components",
}  # fmt: skip
UPDATE_KEYS = {
    "id", "status", "body", "incident_id", "created_at", "updated_at", "display_at", "affected_components",
    "deliver_notifications", "custom_tweet", "tweet_id",
}  # fmt: skip
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$")
ID = re.compile(r"^[0-9bcdfghjklmnpqrstvwxyz]{12}$")


def busy(status: Status) -> dict[str, str]:
    """Groups, every incident state, every maintenance state."""
    key = status.new_key()
    made: dict[str, str] = {}

    def post(path: str, body: dict[str, Any]) -> str:
        result: str = status.write("POST", path, body, key)["id"]
        return result

    made["api"] = post("components", {"name": "REST API", "position": 1, "start_date": "2024-05-01"})
    made["importer"] = post("components", {"name": "Importer", "position": 2, "description": "line\r\nbreak"})
    made["n0"] = post("components", {"name": "Node 0", "position": 1})
    made["n1"] = post("components", {"name": "Node 1", "position": 2})
    made["group"] = post(
        "groups", {"name": "Consensus network", "position": 3, "components": [made["n0"], made["n1"]]}
    )
    for state in ("investigating", "identified", "monitoring"):
        made[state] = post("incidents", {"name": f"An {state} incident", "status": state})
        status.clock.advance(minutes=1)
    made["degraded"] = post(
        "incidents", {"name": "Slow node", "components": {made["n1"]: "degraded_performance"}, "body": "Slow."}
    )
    status.clock.advance(minutes=1)
    made["resolved"] = post("incidents", {"name": "Fixed", "components": {made["api"]: "partial_outage"}})
    status.write("POST", f"incidents/{made['resolved']}/resolve", {"body": "Done."}, key)
    status.clock.advance(minutes=1)
    made["postmortem"] = post("incidents", {"name": "Postmortem one"})
    status.write("POST", f"incidents/{made['postmortem']}/resolve", {}, key)
    status.write("POST", f"incidents/{made['postmortem']}/postmortem", {"body": "What happened."}, key)
    now = status.clock.now

    def window(start: int, end: int, **extra: Any) -> dict[str, Any]:
        return {
            "scheduled_for": (now + _minutes(start)).isoformat(),
            "scheduled_until": (now + _minutes(end)).isoformat(),
            **extra,
        }

    made["upcoming"] = post("maintenances", {"name": "Upgrade", **window(60, 120, components=[made["importer"]])})
    made["in_progress"] = post("maintenances", {"name": "Now", **window(-10, 50, components=[made["group"]])})
    made["verifying"] = post("maintenances", {"name": "Verify", **window(-60, -5, auto_completed=False)})
    made["completed"] = post("maintenances", {"name": "Past", **window(-120, -90)})
    return made


def _minutes(count: int) -> Any:
    import datetime as dt

    return dt.timedelta(minutes=count)


def check_shapes(body: dict[str, Any], name: str) -> None:
    assert set(body) == ENDPOINTS[name]
    assert set(body["page"]) == PAGE_KEYS
    assert TIMESTAMP.match(body["page"]["updated_at"])
    assert ID.match(body["page"]["id"])
    for component in body.get("components", []):
        expected = COMPONENT_KEYS | ({"components"} if component["group"] else set())
        assert set(component) == expected
        assert ID.match(component["id"])
        assert TIMESTAMP.match(component["created_at"]) and TIMESTAMP.match(component["updated_at"])
    for item in body.get("incidents", []) + body.get("scheduled_maintenances", []):
        maintenance = "scheduled_for" in item
        expected = INCIDENT_KEYS | ({"scheduled_for", "scheduled_until"} if maintenance else set())
        assert set(item) == expected
        assert ID.match(item["id"])
        assert item["incident_updates"], "clients read element 0"
        for update in item["incident_updates"]:
            assert set(update) == UPDATE_KEYS
            assert ID.match(update["id"])
            assert TIMESTAMP.match(update["display_at"])
        shown = [update["display_at"] for update in item["incident_updates"]]
        assert shown == sorted(shown, reverse=True)
    if "status" in body:
        assert set(body["status"]) == {"indicator", "description"}


def test_empty_page(status: Status) -> None:
    for name in ENDPOINTS:
        body = status.get(name)
        check_shapes(body, name)
    summary = status.get("summary.json")
    assert summary["status"] == {"indicator": "none", "description": "All Systems Operational"}
    assert summary["page"]["url"] == "https://status.example.org"
    assert summary["page"]["time_zone"] == "Etc/UTC"
    assert summary["components"] == summary["incidents"] == summary["scheduled_maintenances"] == []


def test_busy_page(status: Status) -> None:
    made = busy(status)
    for name in ENDPOINTS:
        check_shapes(status.get(name), name)
    summary = status.get("summary.json")
    components = {item["id"]: item for item in summary["components"]}
    assert [item["position"] for item in summary["components"]] == sorted(
        item["position"] for item in summary["components"]
    )
    group = components[made["group"]]
    assert group["group"] is True and group["group_id"] is None
    assert group["components"] == [made["n0"], made["n1"]]
    assert components[made["n1"]]["status"] == "degraded_performance"
    assert components[made["n0"]]["status"] == "under_maintenance"
    assert group["status"] == "degraded_performance"
    assert components[made["api"]]["status"] == "operational"
    assert components[made["api"]]["start_date"] == "2024-05-01"
    assert components[made["importer"]]["start_date"] is None
    unresolved = [item["id"] for item in summary["incidents"]]
    assert unresolved == [made["degraded"], made["monitoring"], made["identified"], made["investigating"]]
    assert {item["status"] for item in summary["scheduled_maintenances"]} == {
        "scheduled",
        "in_progress",
        "verifying",
    }
    assert summary["status"] == {"indicator": "minor", "description": "Partially Degraded Service"}

    incidents = status.get("incidents.json")["incidents"]
    by_id = {item["id"]: item for item in incidents}
    assert len(incidents) == 6
    assert by_id[made["postmortem"]]["status"] == "postmortem"
    assert by_id[made["postmortem"]]["resolved_at"] is not None
    assert by_id[made["monitoring"]]["monitoring_at"] is not None
    assert by_id[made["investigating"]]["monitoring_at"] is None
    resolved = by_id[made["resolved"]]
    assert resolved["impact"] == "major", "the peak is kept after resolution"
    assert resolved["shortlink"] == f"https://status.example.org/incidents/{made['resolved']}"
    latest = resolved["incident_updates"][0]
    assert latest["status"] == "resolved" and latest["body"] == "Done."
    assert latest["affected_components"] == [
        {"code": made["api"], "name": "REST API", "old_status": "partial_outage", "new_status": "operational"}
    ]
    slow = by_id[made["degraded"]]
    assert slow["impact"] == "minor"
    assert slow["incident_updates"][0]["affected_components"][0]["name"] == "Consensus network - Node 1"
    assert [item["id"] for item in slow["components"]] == [made["n1"]]
    assert by_id[made["investigating"]]["incident_updates"][0]["affected_components"] is None

    maintenances = status.get("scheduled-maintenances.json")["scheduled_maintenances"]
    assert [item["id"] for item in maintenances] == [
        made["upcoming"], made["in_progress"], made["verifying"], made["completed"]
    ]  # fmt: skip
    assert [item["status"] for item in maintenances] == ["scheduled", "in_progress", "verifying", "completed"]
    assert all(item["impact"] == "maintenance" for item in maintenances)
    upcoming = status.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"]
    assert [item["id"] for item in upcoming] == [made["upcoming"]]
    active = status.get("scheduled-maintenances/active.json")["scheduled_maintenances"]
    assert [item["id"] for item in active] == [made["in_progress"], made["verifying"]]
    unresolved_only = status.get("incidents/unresolved.json")["incidents"]
    assert [item["id"] for item in unresolved_only] == unresolved


def test_http_behaviour(status: Status) -> None:
    client = status.client
    response = client.get("/api/v2/components.json")
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["cache-control"] == "public, max-age=30"
    etag = response.headers["etag"]
    again = client.get("/api/v2/components.json", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["access-control-allow-origin"] == "*"
    head = client.head("/api/v2/components.json")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == etag
    options = client.options("/api/v2/summary.json")
    assert options.status_code == 204 and options.headers["access-control-allow-origin"] == "*"
    for path in (
        "/api/v2/nothing.json",
        "/api/v2/",
        "/api/v2/incidents/abc.json",
        "/index.html",
        "/api/v2/summary",
    ):
        assert client.get(path).status_code == 404, path
    assert client.post("/api/v2/summary.json").status_code == 405


def test_body_is_cached_until_written(status: Status) -> None:
    first = status.client.get("/api/v2/status.json").headers["etag"]
    key = status.new_key()
    assert status.client.get("/api/v2/status.json").headers["etag"] == first
    status.write("POST", "components", {"name": "X", "status": "major_outage"}, key)
    body = status.get("status.json")
    assert body["status"] == {"indicator": "critical", "description": "Major System Outage"}


def test_maintenance_moves_by_time_alone(status: Status) -> None:
    key = status.new_key()
    api = status.write("POST", "components", {"name": "REST API"}, key)["id"]
    start = status.clock.now + _minutes(10)
    body = {
        "name": "Upgrade",
        "scheduled_for": start.isoformat(),
        "scheduled_until": (start + _minutes(30)).isoformat(),
        "components": [api],
    }
    made = status.write("POST", "maintenances", body, key)["id"]

    def look() -> tuple[str, str, list[str], str]:
        summary = status.get("summary.json")
        items = [item for item in status.get("scheduled-maintenances.json")["scheduled_maintenances"]]
        assert items[0]["id"] == made
        component = summary["components"][0]["status"]
        return (
            items[0]["status"],
            component,
            [u["status"] for u in items[0]["incident_updates"]],
            summary["status"]["indicator"],
        )

    assert look() == ("scheduled", "operational", ["scheduled"], "none")
    status.clock.advance(minutes=10)
    status.client.app.state.status.cache.clear()  # type: ignore[attr-defined]
    assert look() == ("in_progress", "under_maintenance", ["in_progress", "scheduled"], "maintenance")
    assert [m["id"] for m in status.get("scheduled-maintenances/active.json")["scheduled_maintenances"]] == [made]
    status.clock.advance(minutes=30)
    status.client.app.state.status.cache.clear()  # type: ignore[attr-defined]
    assert look() == ("completed", "operational", ["completed", "in_progress", "scheduled"], "none")
    done = status.get("scheduled-maintenances.json")["scheduled_maintenances"][0]
    assert done["resolved_at"] == done["scheduled_until"]
    assert status.get("scheduled-maintenances/active.json")["scheduled_maintenances"] == []
    assert status.get("summary.json")["scheduled_maintenances"] == []


def test_body_cache_expires_with_the_clock(status: Status) -> None:
    key = status.new_key()
    start = status.clock.now + dt.timedelta(seconds=20)
    body = {
        "name": "Soon",
        "scheduled_for": start.isoformat(),
        "scheduled_until": (start + _minutes(5)).isoformat(),
    }
    status.write("POST", "maintenances", body, key)
    assert status.get("scheduled-maintenances/active.json")["scheduled_maintenances"] == []
    status.clock.advance(seconds=25)
    assert status.get("scheduled-maintenances/active.json")["scheduled_maintenances"] == [], "still cached"
    status.clock.advance(seconds=10)
    assert len(status.get("scheduled-maintenances/active.json")["scheduled_maintenances"]) == 1


@pytest.mark.parametrize("wire", ["subset"])
def test_subset_wire(status: Status, wire: str) -> None:
    from dataclasses import replace

    state = status.client.app.state.status  # type: ignore[attr-defined]
    state.settings = replace(state.settings, wire=wire)
    key = status.new_key()
    api = status.write("POST", "components", {"name": "REST API"}, key)["id"]
    now = status.clock.now
    body = {
        "name": "Now",
        "scheduled_for": (now - _minutes(1)).isoformat(),
        "scheduled_until": (now + _minutes(5)).isoformat(),
        "components": [api],
    }
    status.write("POST", "maintenances", body, key)
    summary = status.get("summary.json")
    assert summary["components"][0]["status"] == "operational"
    assert summary["status"]["indicator"] == "none"
    assert summary["scheduled_maintenances"][0]["status"] == "in_progress"


def test_time_zone_offsets(clean: Any) -> None:
    import datetime as dt

    from ledgermirror.status.wire import timestamp

    moment = dt.datetime(2019, 2, 21, 14, 31, 24, 239999, tzinfo=dt.UTC)
    assert timestamp(moment) == "2019-02-21T14:31:24.239Z"
    assert timestamp(moment, "America/Chicago") == "2019-02-21T08:31:24.239-06:00"
    assert timestamp(moment.replace(microsecond=0)) == "2019-02-21T14:31:24.000Z"
