"""Real Statuspage clients from PyPI against our service on 127.0.0.1 (empty page and busy page).

- ``statuspage-prometheus-exporter`` (2.6.0): its own ``check_status_page_service`` fetches our summary.json
  over HTTP (requests) from the URL we give it in its config.
- ``statuscheck`` (3.11.0): a ``BaseStatusPageAPI`` subclass whose ``_get_base_url`` points at us; its
  ``get_summary`` fetches summary.json over HTTP (httpx) and validates enums through dict lookups and attrs
  validators. It pins httpx 0.16/click 7/attrs 20, which conflict with ours, so it is not in the ``test``
  extra: install it with ``pip install --no-deps statuscheck==3.11.0`` (it works with current httpx/attrs);
  the test is skipped without it.

All traffic goes to 127.0.0.1; proxy variables are cleared while the clients run.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.status.harness import Status
from tests.status.live import no_proxies, serve
from tests.status.test_public import busy

from ledgermirror.runtime import Prepared
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings


@pytest.fixture
def live(status: Status, clean: Prepared, status_settings: StatusSettings) -> Iterator[tuple[Status, str]]:
    app = create_status_app(status_settings, clean.api_url, clean.owner_url, status.clock)
    with serve(app) as base, no_proxies():
        yield status, base


def exporter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, url: str) -> dict[str, Any]:
    config = {key: {"url": url, "name": "Ledger Mirror"}}
    (tmp_path / "services.json").write_text(json.dumps(config))
    monkeypatch.setenv("SERVICES_JSON_PATH", str(tmp_path / "services.json"))
    monkeypatch.chdir(tmp_path)  # it keeps a cache directory under the working directory
    checker = importlib.import_module("statuspage_prometheus_exporter.service_checker")
    result: dict[str, Any] = checker.check_status_page_service(key, config[key])
    return result


def test_exporter_empty_page(live: tuple[Status, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("statuspage_prometheus_exporter", reason="pip install statuspage-prometheus-exporter")
    _, base = live
    result = exporter(tmp_path, monkeypatch, "empty", base + "/api/v2/summary.json")
    assert result["success"] is True
    assert result["status"] == 1 and result["raw_status"] == "none"
    assert result["details"] == "All Systems Operational"
    assert result["incident_metadata"] == [] and result["maintenance_metadata"] == []
    assert result["component_metadata"] == []


def test_exporter_busy_page(live: tuple[Status, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("statuspage_prometheus_exporter", reason="pip install statuspage-prometheus-exporter")
    status, base = live
    made = busy(status)
    summary = status.get("summary.json")
    result = exporter(tmp_path, monkeypatch, "busy", base + "/api/v2/summary.json")
    assert result["success"] is True
    assert result["raw_status"] == summary["status"]["indicator"] and result["status"] == 0
    for name in ("Slow node (affects: Node 1)", "An monitoring incident", "An investigating incident"):
        assert name in result["details"]  # with active incidents it lists them instead of the description
    incidents = {item["id"]: item for item in result["incident_metadata"]}
    assert set(incidents) == {made[name] for name in ("investigating", "identified", "monitoring", "degraded")}
    assert incidents[made["degraded"]]["affected_components"] == ["Node 1"]
    assert incidents[made["degraded"]]["shortlink"] == f"https://status.example.org/incidents/{made['degraded']}"
    maintenances = {item["id"]: item["status"] for item in result["maintenance_metadata"]}
    assert maintenances == {made["upcoming"]: "scheduled", made["in_progress"]: "in_progress"} | {
        made["verifying"]: "verifying"
    }
    degraded = {item["name"] for item in result["component_metadata"]}
    assert {"Node 0", "Node 1", "Consensus network"} <= degraded


def statuscheck_summary(base: str) -> Any:
    module = importlib.import_module("statuscheck.services.bases._statuspageio")

    class Ours(module.BaseStatusPageAPI):  # type: ignore[misc,name-defined]
        name = "Ledger Mirror"

        def _get_base_url(self) -> str:
            return base + "/api/v2/"

    return Ours().get_summary()


def test_statuscheck_empty_and_busy(live: tuple[Status, str]) -> None:
    pytest.importorskip(
        "statuscheck", reason="statuscheck pins old httpx/click/attrs: pip install --no-deps statuscheck==3.11.0"
    )
    status, base = live
    empty = statuscheck_summary(base)
    assert empty.status.is_ok is True and empty.status.name == "No issues"
    assert empty.components == [] and empty.incidents == []
    made = busy(status)
    summary = status.get("summary.json")
    full = statuscheck_summary(base)
    assert full.status.code == summary["status"]["indicator"]
    assert full.status.description == summary["status"]["description"] and full.status.is_ok is False
    components = {item.id: item.status for item in full.components}
    assert components[made["n1"]] == "Degraded performance"
    assert components[made["n0"]] == "Under maintenance"
    assert components[made["api"]] == "Operational"
    events = {item.id: item.status for item in full.incidents}
    expected = {made[name]: name for name in ("investigating", "identified", "monitoring")}
    expected |= {made["degraded"]: "investigating", made["upcoming"]: "scheduled"}
    expected |= {made["in_progress"]: "in_progress", made["verifying"]: "verifying"}
    assert events == expected
