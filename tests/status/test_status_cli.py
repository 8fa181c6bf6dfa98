"""``ledgermirror status ...``: parsing, key commands, management commands and the default components."""

from __future__ import annotations

import datetime as dt

import pytest
from tests.status.harness import Status
from tests.support import Ledger

from ledgermirror.cli import build_parser
from ledgermirror.settings import Settings
from ledgermirror.status import cli, keys


def run(status: Status, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    args = build_parser().parse_args(["status", *argv])
    assert status.run(lambda conn: cli.execute(conn, args, Settings(), status.clock)) == 0
    return capsys.readouterr().out


def test_serve_options() -> None:
    args = build_parser().parse_args(["status", "serve", "--host", "0.0.0.0", "--port", "6000"])
    assert (args.command, args.status_command, args.status_host, args.status_port) == (
        "status",
        "serve",
        "0.0.0.0",
        6000,
    )
    assert build_parser().parse_args(["status", "serve"]).status_port is None


def test_keys(status: Status, capsys: pytest.CaptureFixture[str]) -> None:
    key_id, token = run(status, capsys, "key", "create", "ops").split()
    assert token.startswith(keys.PREFIX + key_id)
    assert (
        status.client.post(
            "/manage/v1/components", json={"name": "A"}, headers={"authorization": f"Bearer {token}"}
        ).status_code
        == 201
    )
    assert f"{key_id}\tops" in run(status, capsys, "key", "list")
    run(status, capsys, "key", "revoke", key_id)
    assert "revoked" in run(status, capsys, "key", "list")
    assert (
        status.client.post(
            "/manage/v1/components", json={"name": "B"}, headers={"authorization": f"Bearer {token}"}
        ).status_code
        == 401
    )


def test_management_commands(status: Status, capsys: pytest.CaptureFixture[str]) -> None:
    api = run(status, capsys, "component", "add", "--name", "API", "--description", "the REST API").strip()
    group = run(status, capsys, "group", "add", "--name", "Mirror", "--component", api).strip()
    incident = run(
        status, capsys, "incident", "open", "--name", "Slow", "--component", f"{api}=degraded_performance"
    ).strip()
    run(status, capsys, "incident", "update", incident, "--status", "identified", "--body", "Found it.")
    assert status.get("status.json")["status"]["indicator"] == "minor"
    run(status, capsys, "incident", "resolve", incident)
    run(status, capsys, "incident", "postmortem", incident, "--body", "Details.")
    run(status, capsys, "component", "update", api, "--status", "partial_outage")
    start = status.clock.now + dt.timedelta(days=1)
    end = start + dt.timedelta(hours=1)
    data = f'{{"scheduled_for": "{start.isoformat()}", "scheduled_until": "{end.isoformat()}"}}'
    made = run(
        status, capsys, "maintenance", "schedule", "--name", "Upgrade", "--data", data, "--component", api
    ).strip()
    run(status, capsys, "maintenance", "update", made, "--body", "Moved.")
    run(status, capsys, "maintenance", "cancel", made)
    components = {row["id"]: row for row in status.get("components.json")["components"]}
    assert components[group]["components"] == [api] and components[api]["status"] == "partial_outage"
    assert status.get("incidents.json")["incidents"][0]["status"] == "postmortem"
    assert status.get("scheduled-maintenances.json")["scheduled_maintenances"][0]["status"] == "completed"
    log = run(status, capsys, "audit", "--limit", "3")
    assert '"action":"maintenance.cancel"' in log and '"actor":"cli:' in log


def test_defaults(status: Status, ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, node_count, file_data) values "
        "(100, 102, 2, ''::bytea), (200, 102, 3, ''::bytea), (150, 101, 1, ''::bytea)"
    )
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id) values "
        "(100, 0, 3), (200, 0, 3), (200, 1, 4), (200, 2, 5), (150, 9, 12)"
    )
    assert run(status, capsys, "defaults").strip() == "created 6 components"
    assert run(status, capsys, "defaults").strip() == "created 0 components"
    rows = status.get("components.json")["components"]
    names = [row["name"] for row in rows]
    assert names == [
        "Mirror Node REST API", "Node 0 (0.0.3)", "Record stream importer", "Node 1 (0.0.4)",
        "Consensus nodes", "Node 2 (0.0.5)",
    ]  # fmt: skip
    network = next(row for row in rows if row["group"])
    assert len(network["components"]) == 3
    sources = status.run(
        lambda conn: conn.fetch("select distinct status_source from status.component order by status_source")
    )
    # the nodes and the importer are the evaluator's; the REST API and the group stay manual
    assert [row["status_source"] for row in sources] == ["auto:importer", "auto:node", "manual"]


def test_migration_is_idempotent(status: Status) -> None:
    from ledgermirror.db.migrate import bundled_migrations

    sql = next(m.sql for m in bundled_migrations() if m.version == 20)
    page = status.get("status.json")["page"]["id"]
    status.run(lambda conn: conn.execute(sql))
    status.run(lambda conn: conn.execute(sql))
    assert status.get("status.json")["page"]["id"] == page
