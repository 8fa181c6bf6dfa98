"""The management API: no write without a valid key, validation, the audit log, incident and maintenance flows."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from tests.status.harness import Status

from ledgermirror.status import audit, keys, manage

SAMPLE_ID = "bcdfghjklmnp"


def routes() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for route in manage.ROUTES:
        for method in sorted(route.methods or ()):
            if method != "HEAD":
                found.append((method, route.path.replace("{id}", SAMPLE_ID)))
    return found


def test_every_write_route_is_listed() -> None:
    assert len(routes()) == 11


@pytest.mark.parametrize(("method", "path"), routes())
def test_no_write_without_a_valid_key(status: Status, method: str, path: str) -> None:
    good = status.new_key("good")
    revoked_token = status.new_key("old")
    revoked_id = revoked_token[len(keys.PREFIX) : len(keys.PREFIX) + 12]
    status.run(lambda conn: keys.revoke(conn, revoked_id, status.clock.now, "tests"))
    body = {"name": "x"}
    attempts: list[dict[str, str]] = [
        {},
        {"authorization": "Bearer"},
        {"authorization": "Bearer wrong"},
        {"authorization": f"Bearer {good[:-1]}x"},
        {"authorization": f"Bearer {keys.PREFIX}{SAMPLE_ID}_{good[-43:]}"},
        {"authorization": f"Basic {good}"},
        {"authorization": f"Bearer {revoked_token}"},
    ]
    before = status.run(audit.recent)
    for headers in attempts:
        response = status.client.request(method, path, json=body, headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert response.json() == {"error": "a valid API key is required"}
    assert status.run(audit.recent) == before, "a refused write leaves no trace in the data"
    accepted = status.client.request(method, path, json=body, headers={"authorization": f"OAuth {good}"})
    assert accepted.status_code != 401


def test_keys_are_stored_hashed(status: Status) -> None:
    token = status.new_key("ops")
    rows = status.run(lambda conn: conn.fetch("select * from status.api_key"))
    assert len(rows) == 1
    secret = token.split("_", 2)[2]  # lmst_<id>_<secret>; the secret itself may contain "_"
    assert token not in str(dict(rows[0])) and secret not in rows[0]["secret_hash"]
    assert len(rows[0]["secret_hash"]) == 64


def test_every_change_is_audited(status: Status) -> None:
    key = status.new_key("ops")
    key_id = key[len(keys.PREFIX) : len(keys.PREFIX) + 12]
    component = status.write("POST", "components", {"name": "API"}, key)["id"]
    status.write("PATCH", f"components/{component}", {"status": "major_outage"}, key)
    entries = status.run(audit.recent)
    assert [entry["action"] for entry in entries] == ["component.update", "component.create", "key.create"]
    assert entries[0]["actor"] == f"key:{key_id} (ops)"
    assert entries[0]["target_id"] == component
    assert entries[0]["details"] == {"status": "major_outage"}
    history = status.run(
        lambda conn: conn.fetch(
            "select old_status, new_status from status.component_status_history"
            " where component_id = $1 order by id",
            component,
        )
    )
    assert [tuple(row) for row in history] == [(None, "operational"), ("operational", "major_outage")]


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "components", {}, (400, "missing field(s): name")),
        ("POST", "components", {"name": "x", "colour": 1}, (400, "unknown field(s): colour")),
        ("POST", "components", {"name": "x", "status": "fine"}, (400, "status must be one of")),
        ("POST", "components", {"name": "x", "position": 0}, (400, "position must be an integer from 1")),
        ("POST", "components", {"name": "x", "start_date": "2024-1-1"}, (400, "start_date must be a date")),
        ("POST", "components", {"name": "x", "group_id": SAMPLE_ID}, (400, "is not a group")),
        ("POST", "components", {"name": "x", "status_source": "robot"}, (400, "status_source must be")),
        ("POST", "components", {"name": "cof\x00fee"}, (400, "name must not contain NUL")),
        ("POST", "components", {"name": "x", "description": "a\x00"}, (400, "description must not contain NUL")),
        ("POST", "components", {"name": "x", "source_ref": "\x00"}, (400, "source_ref must not contain NUL")),
        ("POST", "groups", {"name": "\x00"}, (400, "name must not contain NUL")),
        ("POST", "incidents", {"name": "x", "body": "down\x00"}, (400, "body must not contain NUL")),
        ("POST", "incidents", {"name": "x\x00", "body": "down"}, (400, "name must not contain NUL")),
        (
            "POST",
            "maintenances",
            {"name": "\x00", "scheduled_for": "2025-01-01T00:00:00Z", "scheduled_until": "2025-01-01T01:00:00Z"},
            (400, "name must not contain NUL"),
        ),
        ("PATCH", f"components/{SAMPLE_ID}", {"name": "y"}, (404, "no component")),
        ("PATCH", "components/NOT-AN-ID", {"name": "y"}, (404, "no such id")),
        ("PATCH", f"groups/{SAMPLE_ID}", {"name": "y"}, (404, "no group")),
        ("POST", "incidents", {"name": "x", "status": "resolved"}, (400, "status must be one of")),
        ("POST", "incidents", {"name": "x", "components": {SAMPLE_ID: "major_outage"}}, (404, "no component")),
        ("POST", f"incidents/{SAMPLE_ID}/resolve", {}, (404, "no incident")),
        ("POST", "maintenances", {"name": "x"}, (400, "missing field(s): scheduled_for, scheduled_until")),
        (
            "POST",
            "maintenances",
            {"name": "x", "scheduled_for": "2025-01-01T00:00:00", "scheduled_until": "2025-01-01T01:00:00Z"},
            (400, "scheduled_for must be an ISO 8601 timestamp with an offset"),
        ),
        (
            "POST",
            "maintenances",
            {"name": "x", "scheduled_for": "2025-01-02T00:00:00Z", "scheduled_until": "2025-01-01T01:00:00Z"},
            (400, "scheduled_until must not be before scheduled_for"),
        ),
        ("POST", f"maintenances/{SAMPLE_ID}/cancel", {}, (404, "no maintenance")),
    ],
)
def test_bad_input(status: Status, method: str, path: str, body: Any, expected: tuple[int, str]) -> None:
    code, message = expected
    key = status.new_key()
    response = status.client.request(
        method, f"/manage/v1/{path}", json=body, headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == code, response.text
    assert message in response.json()["error"]


def test_not_json(status: Status) -> None:
    key = status.new_key()
    response = status.client.post(
        "/manage/v1/components", content=b"{nope", headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 400 and response.json() == {"error": "the body is not valid JSON"}


def test_incident_lifecycle(status: Status) -> None:
    key = status.new_key()
    api = status.write("POST", "components", {"name": "API"}, key)["id"]
    incident = status.write("POST", "incidents", {"name": "Down", "components": {api: "major_outage"}}, key)["id"]
    assert status.get("status.json")["status"] == {"indicator": "critical", "description": "Major System Outage"}
    status.write(
        "PATCH",
        f"incidents/{incident}",
        {"status": "monitoring", "components": {api: "degraded_performance"}},
        key,
    )
    item = status.get("incidents/unresolved.json")["incidents"][0]
    assert item["impact"] == "critical" and item["monitoring_at"] is not None
    status.write("PATCH", f"incidents/{incident}", {"impact_override": "minor"}, key)
    assert status.get("incidents.json")["incidents"][0]["impact"] == "minor"
    response = status.client.post(
        f"/manage/v1/incidents/{incident}/postmortem",
        json={"body": "x"},
        headers={"authorization": f"Bearer {key}"},
    )
    assert response.status_code == 400 and "not resolved yet" in response.json()["error"]
    status.write("POST", f"incidents/{incident}/resolve", {}, key)
    assert status.get("components.json")["components"][0]["status"] == "operational"
    assert status.get("incidents/unresolved.json")["incidents"] == []
    response = status.client.patch(
        f"/manage/v1/incidents/{incident}",
        json={"status": "investigating"},
        headers={"authorization": f"Bearer {key}"},
    )
    assert response.status_code == 400
    status.write("POST", f"incidents/{incident}/postmortem", {"body": "Root cause."}, key)
    done = status.get("incidents.json")["incidents"][0]
    assert done["status"] == "postmortem"
    assert [u["status"] for u in done["incident_updates"]] == [
        "postmortem", "resolved", "monitoring", "investigating"
    ]  # fmt: skip
    assert done["incident_updates"][1]["affected_components"][0]["new_status"] == "operational"


def test_groups(status: Status) -> None:
    key = status.new_key()
    a = status.write("POST", "components", {"name": "A", "status": "partial_outage"}, key)["id"]
    b = status.write("POST", "components", {"name": "B", "position": 2}, key)["id"]
    group = status.write("POST", "groups", {"name": "G", "components": [a, b]}, key)["id"]
    rows = {row["id"]: row for row in status.get("components.json")["components"]}
    assert rows[group]["status"] == "partial_outage" and rows[group]["components"] == [a, b]
    assert rows[a]["group_id"] == group
    status.write("PATCH", f"groups/{group}", {"components": [b], "name": "G2"}, key)
    rows = {row["id"]: row for row in status.get("components.json")["components"]}
    assert rows[group]["components"] == [b] and rows[group]["status"] == "operational"
    assert rows[group]["name"] == "G2" and rows[a]["group_id"] is None


def test_maintenance_update_keeps_automatic_steps(status: Status) -> None:
    key = status.new_key()
    now = status.clock.now
    body = {
        "name": "Upgrade",
        "scheduled_for": (now + dt.timedelta(minutes=1)).isoformat(),
        "scheduled_until": (now + dt.timedelta(minutes=30)).isoformat(),
        "auto_completed": False,
    }
    made = status.write("POST", "maintenances", body, key)["id"]
    status.clock.advance(minutes=2)
    status.write("PATCH", f"maintenances/{made}", {"name": "Upgrade to v0.77"}, key)
    status.clock.advance(minutes=40)
    status.client.app.state.status.cache.clear()  # type: ignore[attr-defined]
    item = status.get("scheduled-maintenances.json")["scheduled_maintenances"][0]
    assert item["name"] == "Upgrade to v0.77"
    assert [u["status"] for u in item["incident_updates"]] == ["verifying", "in_progress", "scheduled"]
    status.write("PATCH", f"maintenances/{made}", {"status": "completed", "body": "All good."}, key)
    item = status.get("scheduled-maintenances.json")["scheduled_maintenances"][0]
    assert [u["status"] for u in item["incident_updates"]] == [
        "completed",
        "verifying",
        "in_progress",
        "scheduled",
    ]
    assert item["incident_updates"][0]["body"] == "All good."
    response = status.client.post(
        f"/manage/v1/maintenances/{made}/cancel", headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 400


def test_cancel(status: Status) -> None:
    key = status.new_key()
    now = status.clock.now
    body = {
        "name": "Later",
        "scheduled_for": (now + dt.timedelta(days=1)).isoformat(),
        "scheduled_until": (now + dt.timedelta(days=1, hours=1)).isoformat(),
    }
    made = status.write("POST", "maintenances", body, key)["id"]
    status.write("POST", f"maintenances/{made}/cancel", {}, key)
    item = status.get("scheduled-maintenances.json")["scheduled_maintenances"][0]
    assert item["status"] == "completed"
    assert item["incident_updates"][0]["body"] == "This scheduled maintenance has been cancelled."
    assert status.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"] == []


def test_management_off_without_owner_url(clean: Any) -> None:
    from starlette.testclient import TestClient

    from ledgermirror.status.app import create_status_app
    from ledgermirror.status.config import StatusSettings

    app = create_status_app(StatusSettings(), clean.api_url, None)
    with TestClient(app) as client:
        assert client.post("/manage/v1/components", json={"name": "x"}).status_code == 503
        assert client.get("/api/v2/status.json").status_code == 200
