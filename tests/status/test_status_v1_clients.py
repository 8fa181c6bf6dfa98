"""The Statuspage v1 management API driven by the real PyPI client ``atlassian-statuspage`` 1.0.2 against this
service on 127.0.0.1: every call it makes for components, groups, incidents, updates and maintenances (the list
of the facts document), each read back through the v2 JSON.

The client pins ``requests==2.29.0`` and ``urllib3==1.26.16`` (hiero-sdk-python needs requests >= 2.31), so it
is not in the ``test`` extra: ``scripts/test`` installs it without its pins (``pip install --no-deps
atlassian-statuspage==1.0.2 lambda_thread_pool==0.0.2 six python-dateutil``; it works with current
requests/urllib3). Without it these tests are skipped.
"""

from __future__ import annotations

import ast
import asyncio
import datetime as dt
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
from tests.status.harness import SetClock, Status
from tests.status.live import no_proxies, serve

from ledgermirror.runtime import Prepared
from ledgermirror.status import keys
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings

sp = pytest.importorskip("atlassian_statuspage", reason="pip install --no-deps atlassian-statuspage==1.0.2")

NOW = dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC)


class Live:
    def __init__(self, base: str, token: str, page_id: str, clock: SetClock) -> None:
        self.base = base
        self.token = token
        self.page_id = page_id
        self.clock = clock
        configuration = sp.Configuration()
        configuration.host = f"{base}/v1"
        configuration.api_key["Authorization"] = token
        configuration.api_key_prefix["Authorization"] = "OAuth"
        self.client = sp.ApiClient(configuration)

    def v2(self, path: str) -> Any:
        response = httpx.get(f"{self.base}/api/v2/{path}")
        assert response.status_code == 200
        return response.json()


@pytest.fixture
def live(clean: Prepared) -> Iterator[Live]:
    clock = SetClock(NOW)
    settings = StatusSettings(page_url="https://status.example.org", cache_seconds=0)
    app = create_status_app(settings, clean.api_url, clean.owner_url, clock)
    status = Status(None, clock, clean.owner_url)  # type: ignore[arg-type]

    async def key(conn: Any) -> tuple[str, str]:
        _, token = await keys.create(conn, "v1", NOW, "tests")
        return token, str(await conn.fetchval("select id from status.page"))

    token, page_id = _run(status, key)
    with no_proxies(), serve(app) as base:
        yield Live(base, token, page_id, clock)


def _run(status: Status, work: Any) -> Any:
    async def go() -> Any:
        conn = await asyncpg.connect(status.owner_url)
        try:
            return await work(conn)
        finally:
            await conn.close()

    return asyncio.run(go())


def test_components_and_groups_through_the_pypi_client(live: Live) -> None:
    api = sp.ComponentsApi(live.client)
    groups = sp.ComponentGroupsApi(live.client)
    page = live.page_id
    pages = sp.PagesApi(live.client)
    assert [item.id for item in pages.get_pages()] == [page]
    assert pages.get_pages_page_id(page).time_zone == "Etc/UTC"

    made = api.post_pages_page_id_components(
        sp.PostPagesPageIdComponents(
            component=sp.PostPagesPageIdComponentsComponent(
                name="API",
                description="The API",
                status="operational",
                showcase=True,
                start_date=dt.date(2030, 1, 1),
            )
        ),
        page,
    )
    assert (made.name, made.status, made.page_id, made.group) == ("API", "operational", page, False)
    other = api.post_pages_page_id_components(
        sp.PostPagesPageIdComponents(component=sp.PostPagesPageIdComponentsComponent(name="Web")), page
    )
    changed = api.patch_pages_page_id_components_component_id(
        sp.PatchPagesPageIdComponents(component=sp.PostPagesPageIdComponentsComponent(status="major_outage")),
        page,
        made.id,
    )
    assert changed.status == "major_outage"
    put = api.put_pages_page_id_components_component_id(
        sp.PatchPagesPageIdComponents(
            component=sp.PostPagesPageIdComponentsComponent(status="degraded_performance")
        ),
        page,
        made.id,
    )
    assert put.status == "degraded_performance"
    assert api.get_pages_page_id_components_component_id(page, made.id).description == "The API"

    group = groups.post_pages_page_id_component_groups(
        sp.PostPagesPageIdComponentGroups(
            description="Front",
            component_group=sp.PostPagesPageIdComponentGroupsComponentGroup(
                components=[made.id, other.id], name="Web"
            ),
        ),
        page,
    )
    assert group.name == "Web" and group.description == "Front"
    assert set(_ids(group.components)) == {made.id, other.id}
    renamed = groups.patch_pages_page_id_component_groups_id(
        sp.PatchPagesPageIdComponentGroups(
            component_group=sp.PostPagesPageIdComponentGroupsComponentGroup(components=[made.id], name="Front end")
        ),
        page,
        group.id,
    )
    assert renamed.name == "Front end" and _ids(renamed.components) == [made.id]
    groups.put_pages_page_id_component_groups_id(
        sp.PutPagesPageIdComponentGroups(
            component_group=sp.PostPagesPageIdComponentGroupsComponentGroup(
                components=[made.id, other.id], name="Web"
            )
        ),
        page,
        group.id,
    )
    assert [item.name for item in groups.get_pages_page_id_component_groups(page)] == ["Web"]
    assert groups.get_pages_page_id_component_groups_id(page, group.id).name == "Web"

    v2 = {item["id"]: item for item in live.v2("components.json")["components"]}
    assert v2[made.id]["status"] == "degraded_performance" and v2[made.id]["group_id"] == group.id
    assert v2[group.id]["group"] and set(v2[group.id]["components"]) == {made.id, other.id}
    listed = api.get_pages_page_id_components(page, page=1, per_page=2)
    assert len(listed) == 2
    assert len(api.get_pages_page_id_components(page, page=2, per_page=2)) == 1

    # a removal of group_id can only be sent as the string "null" through the models
    api.patch_pages_page_id_components_component_id(
        sp.PatchPagesPageIdComponents(component=sp.PostPagesPageIdComponentsComponent(group_id="null")),
        page,
        other.id,
    )
    assert live.v2("components.json")["components"][-1]["group_id"] is None or all(
        item["group_id"] is None for item in live.v2("components.json")["components"] if item["id"] == other.id
    )
    api.delete_pages_page_id_components_component_id(page, other.id)
    assert other.id not in {item["id"] for item in live.v2("components.json")["components"]}
    deleted = groups.delete_pages_page_id_component_groups_id(page, group.id)
    assert deleted.id == group.id
    v2 = {item["id"]: item for item in live.v2("components.json")["components"]}
    assert set(v2) == {made.id} and v2[made.id]["group_id"] is None
    with pytest.raises(sp.rest.ApiException) as gone:
        api.get_pages_page_id_components_component_id(page, other.id)
    assert gone.value.status == 404


def _ids(value: Any) -> list[str]:
    """``GroupComponent.components`` is typed a string by the client's spec: it keeps the array's text form."""
    parsed = ast.literal_eval(value) if isinstance(value, str) else value
    return [str(item) for item in parsed]


def test_incidents_updates_and_maintenances_through_the_pypi_client(live: Live) -> None:
    components = sp.ComponentsApi(live.client)
    incidents = sp.IncidentsApi(live.client)
    updates = sp.IncidentUpdatesApi(live.client)
    page = live.page_id
    api_component = components.post_pages_page_id_components(
        sp.PostPagesPageIdComponents(component=sp.PostPagesPageIdComponentsComponent(name="API")), page
    )
    opened = incidents.post_pages_page_id_incidents(
        {
            "incident": {
                "name": "Slow answers",
                "status": "investigating",
                "body": "We are looking.",
                "components": {api_component.id: "partial_outage"},
                "deliver_notifications": True,
                "metadata": {"jira": {"issue_id": "X-1"}},
            }
        },
        page,
    )
    assert (opened.status, opened.impact) == ("investigating", "major")
    assert [item.id for item in opened.components] == [api_component.id]
    assert opened.incident_updates[0].body == "We are looking."
    assert live.v2("components.json")["components"][0]["status"] == "partial_outage"

    later = sp.IncidentsApi(live.client).patch_pages_page_id_incidents_incident_id(
        sp.PatchPagesPageIdIncidents(
            incident=sp.PatchPagesPageIdIncidentsIncident(status="identified", body="Found it.")
        ),
        page,
        opened.id,
    )
    assert later.status == "identified" and later.incident_updates[0].body == "Found it."
    update_id = later.incident_updates[0].id
    edited = updates.patch_pages_page_id_incidents_incident_id_incident_updates_incident_update_id(
        sp.PatchPagesPageIdIncidentsIncidentIdIncidentUpdates(
            incident_update=sp.PatchPagesPageIdIncidentsIncidentIdIncidentUpdatesIncidentUpdate(
                body="Found the cause."
            )
        ),
        page,
        opened.id,
        update_id,
    )
    assert edited.body == "Found the cause."
    updates.put_pages_page_id_incidents_incident_id_incident_updates_incident_update_id(
        sp.PutPagesPageIdIncidentsIncidentIdIncidentUpdates(
            incident_update=sp.PatchPagesPageIdIncidentsIncidentIdIncidentUpdatesIncidentUpdate(body="The cause.")
        ),
        page,
        opened.id,
        update_id,
    )
    assert [item.id for item in incidents.get_pages_page_id_incidents_unresolved(page)] == [opened.id]
    resolved = incidents.patch_pages_page_id_incidents_incident_id(
        {"incident": {"status": "resolved", "body": "Fixed.", "components": {api_component.id: "operational"}}},
        page,
        opened.id,
    )
    assert resolved.status == "resolved" and resolved.resolved_at is not None
    v2 = live.v2("incidents.json")["incidents"][0]
    assert v2["status"] == "resolved"
    assert [item["body"] for item in v2["incident_updates"]] == ["Fixed.", "The cause.", "We are looking."]
    assert live.v2("components.json")["components"][0]["status"] == "operational"
    assert incidents.get_pages_page_id_incidents_unresolved(page) == []
    assert [item.id for item in incidents.get_pages_page_id_incidents(page, q="cause", limit=10, page=1)] == [
        opened.id
    ]
    assert incidents.get_pages_page_id_incidents(page, q="nothing like it") == []

    # a maintenance: naive datetimes (isoformat without an offset) are UTC
    start = dt.datetime(2030, 1, 1, 14, 0)
    planned = incidents.post_pages_page_id_incidents(
        sp.PostPagesPageIdIncidents(
            incident=sp.PostPagesPageIdIncidentsIncident(
                name="Database upgrade",
                status="scheduled",
                scheduled_for=start,
                scheduled_until=start + dt.timedelta(hours=1),
                scheduled_remind_prior=True,
                scheduled_auto_in_progress=True,
                scheduled_auto_completed=True,
                auto_transition_to_maintenance_state=True,
                auto_transition_to_operational_state=True,
                component_ids=[api_component.id],
                body="We upgrade the database.",
            )
        ),
        page,
    )
    assert planned.status == "scheduled" and planned.scheduled_for is not None
    assert [item.id for item in incidents.get_pages_page_id_incidents_upcoming(page)] == [planned.id]
    assert [item.id for item in incidents.get_pages_page_id_incidents_scheduled(page)] == [planned.id]
    upcoming = live.v2("scheduled-maintenances/upcoming.json")["scheduled_maintenances"]
    assert upcoming[0]["scheduled_for"] == "2030-01-01T14:00:00.000Z"
    assert upcoming[0]["components"][0]["id"] == api_component.id
    for status in ("in_progress", "verifying"):
        moved = incidents.patch_pages_page_id_incidents_incident_id(
            {"incident": {"status": status}}, page, planned.id
        )
        assert moved.status == status
    assert [item.id for item in incidents.get_pages_page_id_incidents_active_maintenance(page)] == [planned.id]
    done = incidents.put_pages_page_id_incidents_incident_id(
        {"incident": {"status": "completed"}}, page, planned.id
    )
    assert done.status == "completed"
    assert live.v2("scheduled-maintenances.json")["scheduled_maintenances"][0]["status"] == "completed"
    with pytest.raises(sp.rest.ApiException) as wrong:
        incidents.patch_pages_page_id_incidents_incident_id(
            {"incident": {"status": "investigating"}}, page, planned.id
        )
    assert wrong.value.status == 422
    removed = incidents.delete_pages_page_id_incidents_incident_id(page, opened.id)
    assert removed.id == opened.id
    assert [item["id"] for item in live.v2("incidents.json")["incidents"]] == []
    assert incidents.get_pages_page_id_incidents_incident_id(page, planned.id).name == "Database upgrade"


def test_the_status_codes_and_bodies_the_terraform_go_sdk_checks(live: Live) -> None:
    """What yannh/statuspage-go-sdk expects: ``OAuth`` auth, JSON bodies without a Content-Type, 201 on create,
    200 on PATCH, 204 on a component delete, 200 on a group delete, 404 on a GET of something gone, an integer
    group position and a real array of components."""
    page = live.page_id
    base = f"{live.base}/v1/pages/{page}"
    auth = {"authorization": f"OAuth {live.token}"}

    def send(method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
        return httpx.request(method, base + path, content=body, headers=headers if headers is not None else auth)

    created = send("POST", "/components", b'{"component": {"name": "Node", "status": "operational"}}')
    assert created.status_code == 201
    component = created.json()
    assert component["automation_email"] == "" and component["group_id"] is None
    patched = send("PATCH", f"/components/{component['id']}", b'{"component": {"description": "x"}}')
    assert patched.status_code == 200 and patched.json()["description"] == "x"
    group = send(
        "POST",
        "/component-groups",
        b'{"component_group": {"name": "G", "components": ["%s"], "description": "d"}}' % component["id"].encode(),
    )
    assert group.status_code == 201
    assert isinstance(group.json()["position"], int) and group.json()["components"] == [component["id"]]
    assert group.json()["description"] == "d"
    assert send("DELETE", f"/component-groups/{group.json()['id']}").status_code == 200
    deleted = send("DELETE", f"/components/{component['id']}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert send("GET", f"/components/{component['id']}").status_code == 404
    assert send("DELETE", f"/components/{component['id']}").status_code == 404

    # auth: api_key parameter, bare key; failures are 401 with a message
    assert httpx.get(f"{base}/components?api_key={live.token}").status_code == 200
    assert send("GET", "/components", headers={"authorization": live.token}).status_code == 200
    refused = send("GET", "/components", headers={"authorization": "OAuth nope"})
    assert refused.status_code == 401 and refused.json() == {"message": "Could not authenticate"}
    assert send("GET", "/components", headers={}).status_code == 401
    # errors: 404 for another page, 400 for a body that is not JSON or not wrapped, 422 for validation
    assert httpx.get(f"{live.base}/v1/pages/bcdfghjklmnp/components", headers=auth).status_code == 404
    assert send("POST", "/components", b"{not json").status_code == 400
    assert send("POST", "/components", b'{"name": "unwrapped"}').status_code == 400
    assert send("POST", "/incidents", b'{"incident": {"status": "investigating"}}').status_code == 422
    too_long = send("POST", "/incidents", b'{"incident": {"name": "%s"}}' % (b"x" * 256))
    assert too_long.status_code == 422 and "name" in too_long.json()["message"]
    placeholder = send(
        "POST", "/incidents", b'{"incident": {"name": "n", "components": {"0fkxplvz30xp": "major_outage"}}}'
    )
    assert placeholder.status_code == 422
    assert send("GET", "/components?page=x").status_code == 400
    assert send("GET", "/components.json").status_code == 200  # the docs' .json suffix
