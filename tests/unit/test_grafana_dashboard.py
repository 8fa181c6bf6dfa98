"""docs/grafana-dashboard.json: valid JSON, and every metric its queries name is one a service exposes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from ledgermirror.metrics.api import ApiMetrics
from ledgermirror.metrics.importer import ImporterMetrics
from ledgermirror.metrics.status import StatusMetrics

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"


def exposed() -> set[str]:
    """Every sample name the three services can expose (label children created so histograms show)."""
    api, status, importer = ApiMetrics(), StatusMetrics(), ImporterMetrics()
    for metrics in (api.http, status.http):
        metrics.record("/x", "GET", 200, 0.001)
    status.writes.labels("/x", "ok").inc()
    status.automatic_changes.labels("maintenance").inc()
    importer.rows.labels("x").inc()
    importer.verification_failures.labels("x").inc()
    importer.node_signatures.labels("valid").inc()
    names = set()
    for registry in (api.registry, status.registry, importer.registry):
        for family in text_string_to_metric_families(generate_latest(registry).decode()):
            names.update(sample.name for sample in family.samples)
    return names


def test_every_queried_metric_exists() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(expressions) >= 10
    queried = {name for expr in expressions for name in re.findall(r"\bledgermirror_[a-z_]+", expr)}
    missing = queried - exposed()
    assert not missing, f"the dashboard queries metrics no service exposes: {sorted(missing)}"
    titles = {panel["title"] for panel in dashboard["panels"]}
    assert {"API p99 latency by route", "Importer lag behind the stream", "Database pool pressure"} <= titles
