"""The status service's own metrics: management writes by route template and result, and automatic status
changes (today: the moves a maintenance makes by the clock alone, counted when they are written down)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from ledgermirror.metrics.http import HttpMetrics


class StatusMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.http = HttpMetrics(self.registry, "status")
        self.writes = Counter(
            "ledgermirror_status_management_writes",
            "Management API writes, by route template and result (ok, or the refusal's HTTP status)",
            ["route", "result"],
            registry=self.registry,
        )
        self.automatic_changes = Counter(
            "ledgermirror_status_automatic_changes",
            "Status changes made without a person: maintenance moves by the clock (scheduled -> in progress -> "
            "completed), counted when written down",
            ["kind"],
            registry=self.registry,
        )
