"""The evaluator on a simulated network imported by the real importer: the consensus nodes appear as components
from the address book, a node that stops signing is degraded then in major outage, a node signing with a wrong
key is in partial outage, the importer follows the lag; every change at the right time in the JSON, the status
history (with its reason) and the audit log, and an operator's override is left alone."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import http.server
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from starlette.testclient import TestClient
from tests.status.harness import SetClock, Status
from tests.status.scenarios import SILENT_FROM, WRONG_FROM, Network, freezes, misbehaving_network

from ledgermirror.runtime import Prepared
from ledgermirror.status import components_ops
from ledgermirror.status.app import create_status_app
from ledgermirror.status.automation import Automation, Evaluation, Service
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.probes import grpc_ready, http_ready
from ledgermirror.status.rules import Rules
from ledgermirror.status.wire import from_ns

pytestmark = pytest.mark.usefixtures("ledger")

RULES = Rules(window=30, missed_degraded=3, missed_major=10, lag_degraded_seconds=60, stall_seconds=300)


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Network:
    return misbehaving_network(tmp_path_factory.mktemp("misbehaving") / "network")


@pytest.fixture
def scenario(network: Network, tmp_path: Path) -> Network:
    """A copy of the network per test (the copy remembers whether it was imported from the start)."""
    shutil.copytree(network.root, tmp_path / "network")
    return Network(tmp_path / "network", network.names)


@pytest.fixture
def served(clean: Prepared) -> Iterator[Status]:
    clock = SetClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    app = create_status_app(
        StatusSettings(page_url="https://status.example.org"), clean.api_url, clean.owner_url, clock
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Status(client, clock, clean.owner_url)


def _evaluate(status: Status, at_ns: int) -> Evaluation:
    status.clock.now = from_ns(at_ns)
    automation = Automation(RULES)
    return status.run(lambda conn: automation.evaluate(conn, status.clock.now))


def _by_name(status: Status) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in status.get("components.json")["components"]}


def _history(status: Status, name: str) -> list[tuple[str | None, str, str | None]]:
    rows = status.run(
        lambda conn: conn.fetch(
            "select h.old_status, h.new_status, h.reason from status.component_status_history h "
            "join status.component c on c.id = h.component_id where c.name = $1 order by h.id",
            name,
        )
    )
    return [(row["old_status"], row["new_status"], row["reason"]) for row in rows]


def test_a_misbehaving_network_drives_the_components(served: Status, scenario: Network) -> None:
    url = served.owner_url
    seconds = 1_000_000_000
    # the first files: every node signs, the importer keeps up
    assert scenario.import_up_to(url, SILENT_FROM - 1) == SILENT_FROM
    first = _evaluate(served, scenario.instant(SILENT_FROM - 1) + 5 * seconds)
    assert first.wrote and first.changes == []
    components = _by_name(served)
    nodes = {name for name in components if name.startswith("Node ")}
    assert {"Node 0 (0.0.3)", "Node 1 (0.0.4)", "Node 2 (0.0.5)", "Node 3 (0.0.6)"} <= nodes
    group = components["Consensus nodes"]
    assert group["group"] and {components[name]["id"] for name in nodes} <= set(group["components"])
    assert {components[name]["status"] for name in [*nodes, "Record stream importer"]} == {"operational"}

    # node 1 missed 4 files in a row: degraded
    assert scenario.import_up_to(url, SILENT_FROM + 3) == 4
    changed = _evaluate(served, scenario.instant(SILENT_FROM + 3) + 5 * seconds).changes
    assert [(change.name, change.new) for change in changed] == [("Node 1 (0.0.4)", "degraded_performance")]
    assert changed[0].reason == "node 0.0.4: missed 4 of the last 20 files (4 in a row)"
    assert _by_name(served)["Node 1 (0.0.4)"]["status"] == "degraded_performance"
    page = served.client.get("/").text
    assert "Automatic status: node 0.0.4: missed 4 of the last 20 files (4 in a row)" in page

    # to the end: node 1 missed 14 in a row (major outage), node 2's last signatures fail (partial outage)
    assert scenario.import_up_to(url, len(scenario.names) - 1) == len(scenario.names) - SILENT_FROM - 4
    end = scenario.instant(len(scenario.names) - 1)
    changed = _evaluate(served, end + 5 * seconds).changes
    assert sorted((change.name, change.new) for change in changed) == [
        ("Node 1 (0.0.4)", "major_outage"),
        ("Node 2 (0.0.5)", "partial_outage"),
    ]
    missed = len(scenario.names) - SILENT_FROM
    failed = len(scenario.names) - WRONG_FROM
    components = _by_name(served)
    assert components["Node 1 (0.0.4)"]["status"] == "major_outage"
    assert components["Node 2 (0.0.5)"]["status"] == "partial_outage"
    assert components["Consensus nodes"]["status"] == "major_outage"
    assert _history(served, "Node 1 (0.0.4)") == [
        (None, "operational", None),
        ("operational", "degraded_performance", "node 0.0.4: missed 4 of the last 20 files (4 in a row)"),
        (
            "degraded_performance",
            "major_outage",
            f"node 0.0.4: missed {missed} of the last 30 files ({missed} in a row)",
        ),
    ]
    assert _history(served, "Node 2 (0.0.5)")[-1] == (
        "operational",
        "partial_outage",
        f"node 0.0.5: signature failed verification on {failed} of the last 30 files",
    )

    # the stream stalls: the importer is degraded after a minute behind, in major outage after five
    assert [change.new for change in _evaluate(served, end + 90 * seconds).changes] == ["degraded_performance"]
    assert [change.new for change in _evaluate(served, end + 400 * seconds).changes] == ["major_outage"]
    reason = _history(served, "Record stream importer")[-1][2]
    assert reason is not None
    assert re.fullmatch(
        r"importer: no new consensus time for 39\d s \(the stream stopped, or the importer\)", reason
    )
    assert _by_name(served)["Record stream importer"]["status"] == "major_outage"
    audit = served.run(
        lambda conn: conn.fetch(
            "select action, details from status.audit_log where actor = $1 and action = $2 order by id",
            "auto:evaluator",
            "component.auto_status",
        )
    )
    assert len(audit) == 5
    details = [json.loads(row["details"]) for row in audit]
    major = next(
        item for item in details if item["new"] == "major_outage" and "consecutive_missed" in item["evidence"]
    )
    assert major["evidence"]["consecutive_missed"] == missed
    assert major["evidence"]["first_file"] == scenario.names[0]


def test_an_operators_override_and_hiding_are_kept(served: Status, scenario: Network) -> None:
    url = served.owner_url
    scenario.import_up_to(url, len(scenario.names) - 1)
    end = scenario.instant(len(scenario.names) - 1) + 5 * 1_000_000_000
    _evaluate(served, end)
    silent = _by_name(served)["Node 1 (0.0.4)"]
    assert silent["status"] == "major_outage"

    async def operator(conn: asyncpg.Connection[Any]) -> None:
        now = served.clock.now
        await components_ops.update_component(conn, silent["id"], {"status": "operational"}, now, "tests")
        other = _by_name(served)["Node 3 (0.0.6)"]["id"]
        await components_ops.update_component(conn, other, {"hidden": True, "name": "Spare"}, now, "tests")

    served.run(operator)
    assert _evaluate(served, end + 1).changes == []
    components = _by_name(served)
    assert components["Node 1 (0.0.4)"]["status"] == "operational"  # the override stands
    assert "Node 3 (0.0.6)" not in components and "Spare" not in components  # hidden stays hidden, renamed
    source = served.run(
        lambda conn: conn.fetchval("select status_source from status.component where id = $1", silent["id"])
    )
    assert source == "manual"


def test_the_evaluator_runs_on_the_importers_commit_notification(clean: Prepared, scenario: Network) -> None:
    clock = SetClock(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    settings = StatusSettings(page_url="https://status.example.org", evaluate_seconds=3600)
    app = create_status_app(settings, clean.api_url, clean.owner_url, clock, automation=Automation(RULES))
    with TestClient(app, raise_server_exceptions=False) as client:
        watcher = client.app.state.status.watcher  # type: ignore[attr-defined]
        _wait(lambda: watcher.evaluations >= 1)
        scenario.import_up_to(clean.owner_url, len(scenario.names) - 1)
        clock.now = from_ns(scenario.instant(len(scenario.names) - 1))
        _wait(lambda: watcher.evaluations >= 2)  # woken by the notification, not the hourly schedule
        names = {
            item["name"]: item["status"] for item in client.get("/api/v2/components.json").json()["components"]
        }
    assert names["Node 1 (0.0.4)"] == "major_outage"


def _wait(condition: Any, seconds: float = 20.0) -> None:
    async def go() -> None:
        async with asyncio.timeout(seconds):
            while not condition():
                await asyncio.sleep(0.05)

    asyncio.run(go())


def test_rules_are_configurable_per_component(served: Status, scenario: Network) -> None:
    scenario.import_up_to(served.owner_url, len(scenario.names) - 1)
    end = scenario.instant(len(scenario.names) - 1) + 5 * 1_000_000_000
    _evaluate(served, scenario.instant(0))
    silent = _by_name(served)["Node 1 (0.0.4)"]["id"]
    token = served.new_key()
    served.write("PATCH", f"components/{silent}", {"rules": {"missed_major": 20}}, token)
    bad = served.client.patch(
        f"/manage/v1/components/{silent}",
        json={"rules": {"missed_major": 0}},
        headers={"authorization": f"Bearer {token}"},
    )
    assert bad.status_code == 400 and "missed_major" in bad.json()["error"]
    _evaluate(served, end)
    assert _by_name(served)["Node 1 (0.0.4)"]["status"] == "degraded_performance"  # 14 in a row < 20


class _Readiness(http.server.BaseHTTPRequestHandler):
    answer = 200

    def do_GET(self) -> None:
        self.send_response(type(self).answer)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        return


def test_the_services_follow_their_readiness(served: Status) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Readiness)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/health/readiness"
        services = [
            Service("mirror:rest-api", "Mirror Node REST API", 1, functools.partial(http_ready, url)),
            Service(
                "mirror:grpc-api", "Mirror Node gRPC API", 2, functools.partial(grpc_ready, "127.0.0.1:1", 0.5)
            ),
        ]
        automation = Automation(RULES, services)
        now = served.clock.now
        served.run(lambda conn: automation.evaluate(conn, now))
        components = _by_name(served)
        assert components["Mirror Node REST API"]["status"] == "operational"
        assert components["Mirror Node gRPC API"]["status"] == "major_outage"
        _Readiness.answer = 503
        changes = served.run(lambda conn: automation.evaluate(conn, now)).changes
        assert [(change.name, change.new) for change in changes] == [("Mirror Node REST API", "major_outage")]
        assert changes[0].reason == f"Mirror Node REST API: not ready ({url}: HTTP 503)"
    finally:
        _Readiness.answer = 200
        server.shutdown()
        server.server_close()


def test_nodes_follow_address_book_changes(served: Status, ledger: Any) -> None:
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, node_count, file_data) values "
        "(100, 102, 2, ''::bytea)"
    )
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id, description) values "
        "(100, 0, 3, 'alpha'), (100, 1, 4, null)"
    )
    automation = Automation(RULES)
    now = served.clock.now
    served.run(lambda conn: automation.evaluate(conn, now))
    first = _by_name(served)
    assert first["Node 0 (0.0.3)"]["description"] == "alpha"
    assert first["Node 1 (0.0.4)"]["description"] == "Consensus node 1, account 0.0.4"
    # a new book: node 1 leaves, node 2 joins, node 0 moves to account 0.0.7
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, node_count, file_data) values "
        "(200, 102, 2, ''::bytea)"
    )
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id, description) values "
        "(200, 0, 7, 'alpha'), (200, 2, 5, null)"
    )
    served.run(lambda conn: automation.evaluate(conn, now))
    second = _by_name(served)
    assert {name for name in second if name.startswith("Node ")} == {"Node 0 (0.0.7)", "Node 2 (0.0.5)"}
    assert second["Node 0 (0.0.7)"]["id"] == first["Node 0 (0.0.3)"]["id"]  # the same component, renamed
    retired = first["Node 1 (0.0.4)"]["id"]
    kept = served.run(
        lambda conn: conn.fetchval(
            "select count(*) from status.component_status_history where component_id = $1", retired
        )
    )
    assert kept == 1  # hidden, its history kept
    # a restart (a new evaluator) changes nothing; the node coming back shows again
    served.run(lambda conn: Automation(RULES).evaluate(conn, now))
    assert _by_name(served).keys() == second.keys()
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, node_count, file_data) values "
        "(300, 102, 3, ''::bytea)"
    )
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id, description) values "
        "(300, 0, 7, 'alpha'), (300, 1, 4, null), (300, 2, 5, null)"
    )
    served.run(lambda conn: automation.evaluate(conn, now))
    assert _by_name(served)["Node 1 (0.0.4)"]["id"] == retired


def test_automatic_incidents_open_follow_and_resolve_and_leave_peoples_alone(
    served: Status, scenario: Network
) -> None:
    url = served.owner_url
    token = served.new_key()
    theirs = served.write("POST", "incidents", {"name": "Ours", "body": "People at work."}, token)["id"]
    scenario.import_up_to(url, len(scenario.names) - 1)
    end = scenario.instant(len(scenario.names) - 1)
    automation = Automation(RULES, incidents=True)

    def evaluate(at: int) -> Evaluation:
        served.clock.now = from_ns(at)
        return served.run(lambda conn: automation.evaluate(conn, served.clock.now))

    evaluate(end + 5 * 1_000_000_000)
    unresolved = {item["name"]: item for item in served.get("incidents/unresolved.json")["incidents"]}
    assert set(unresolved) == {"Ours", "Node 1 (0.0.4): major outage", "Node 2 (0.0.5): partial outage"}
    silent = unresolved["Node 1 (0.0.4): major outage"]
    assert silent["impact"] == "critical"
    assert silent["incident_updates"][0]["body"] == (
        "Opened by automated detection: node 0.0.4: missed 14 of the last 30 files (14 in a row)."
    )
    # the stream stalls: the importer's incident opens; the operator allows a longer lag: resolved
    evaluate(end + 400 * 1_000_000_000)
    unresolved = {item["name"]: item for item in served.get("incidents/unresolved.json")["incidents"]}
    importer = unresolved["Record stream importer: major outage"]["components"][0]["id"]
    served.write(
        "PATCH", f"components/{importer}", {"rules": {"lag_degraded_seconds": 1000, "stall_seconds": 2000}}, token
    )
    evaluate(end + 500 * 1_000_000_000)
    incidents = {item["name"]: item for item in served.get("incidents.json")["incidents"]}
    stalled = incidents["Record stream importer: major outage"]
    assert stalled["status"] == "resolved"
    assert [update["status"] for update in stalled["incident_updates"]] == ["resolved", "investigating"]
    assert incidents["Ours"]["status"] == "investigating"
    assert [update["body"] for update in incidents["Ours"]["incident_updates"]] == ["People at work."]
    sources = served.run(lambda conn: conn.fetchval("select source from status.incident where id = $1", theirs))
    assert sources == "manual"


def test_freeze_transactions_schedule_and_cancel_maintenances(served: Status, ledger: Any) -> None:
    automation = Automation(RULES, maintenance_minutes=45)
    now = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
    start = int((now + dt.timedelta(hours=2)).timestamp()) * 1_000_000_000
    announced = int(now.timestamp()) * 1_000_000_000
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, node_count, file_data) values "
        "(100, 102, 1, ''::bytea)"
    )
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id) values (100, 0, 3)"
    )
    ledger.execute(
        "insert into network_freeze (consensus_timestamp, start_time, type, file_hash, payer_account_id) values "
        f"({announced - 10}, {announced + 10}, 2, ''::bytea, 58), ({announced}, {start}, 3, ''::bytea, 58)"
    )
    served.clock.now = now
    served.run(lambda conn: automation.evaluate(conn, now))
    served.run(lambda conn: automation.evaluate(conn, now))  # once only
    upcoming = served.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"]
    assert [(item["name"], item["status"]) for item in upcoming] == [("Network upgrade", "scheduled")]
    maintenance = upcoming[0]
    assert maintenance["scheduled_for"] == "2026-01-01T14:00:00.000Z"
    assert maintenance["scheduled_until"] == "2026-01-01T14:45:00.000Z"
    assert {item["name"] for item in maintenance["components"]} >= {"Node 0 (0.0.3)"}
    assert "FREEZE_UPGRADE" in maintenance["incident_updates"][0]["body"]
    page = served.client.get("/").text
    assert "Upcoming maintenance" in page and "Network upgrade" in page
    assert "Network upgrade" in served.client.get("/history.atom").text
    # aborted an hour later: cancelled (completed, with an update saying so), never scheduled again
    ledger.execute(
        "insert into network_freeze (consensus_timestamp, start_time, type, file_hash, payer_account_id) values "
        f"({announced + 3_600_000_000_000}, {announced + 3_600_000_000_000}, 4, ''::bytea, 58)"
    )
    later = now + dt.timedelta(hours=1)
    served.clock.now = later
    served.run(lambda conn: automation.evaluate(conn, later))
    served.run(lambda conn: automation.evaluate(conn, later))
    assert served.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"] == []
    everything = served.get("scheduled-maintenances.json")["scheduled_maintenances"]
    assert [(item["name"], item["status"]) for item in everything] == [("Network upgrade", "completed")]
    assert "FREEZE_ABORT" in everything[0]["incident_updates"][0]["body"]
    page = served.client.get("/").text
    assert "No maintenance scheduled." in page
    assert "FREEZE_ABORT" in served.client.get("/history.rss").text


def test_an_upgrade_scheduled_then_aborted_on_the_simulated_ledger(served: Status, scenario: Network) -> None:
    upgrade, abort = freezes(scenario.root)
    assert (upgrade["type"], abort["type"]) == (3, 4)  # FREEZE_UPGRADE, then FREEZE_ABORT
    announced, aborted = int(str(upgrade["consensus_timestamp"])), int(str(abort["consensus_timestamp"]))
    holding = max(index for index in range(len(scenario.names)) if scenario.instant(index) <= announced)
    assert scenario.instant(holding + 1) <= aborted  # the abort is in the next file (seed 5)
    scenario.import_up_to(served.owner_url, holding)
    _evaluate(served, scenario.instant(holding) + 2 * 1_000_000_000)
    upcoming = served.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"]
    assert [item["name"] for item in upcoming] == ["Network upgrade"]
    start = from_ns(int(str(upgrade["start_time"])))
    assert (
        upcoming[0]["scheduled_for"] == start.strftime("%Y-%m-%dT%H:%M:%S.") + f"{start.microsecond // 1000:03d}Z"
    )
    assert "Network upgrade" in served.client.get("/").text
    # the next file carries the abort: cancelled at the evaluation after it
    scenario.import_up_to(served.owner_url, holding + 1)
    _evaluate(served, scenario.instant(holding + 1) + 2 * 1_000_000_000)
    assert served.get("scheduled-maintenances/upcoming.json")["scheduled_maintenances"] == []
    cancelled = served.get("scheduled-maintenances.json")["scheduled_maintenances"][0]
    assert cancelled["status"] == "completed"
    assert cancelled["incident_updates"][0]["body"].startswith("Cancelled on the ledger by a FREEZE_ABORT")
    assert "FREEZE_ABORT" in served.client.get("/history.atom").text
    assert "No maintenance scheduled." in served.client.get("/").text
