"""``/metrics`` of the status service, parsed with ``prometheus_client``'s parser: requests by route template,
management writes by route and result, and automatic (clock-driven) status changes."""

from __future__ import annotations

import datetime as dt

from prometheus_client.parser import text_string_to_metric_families
from tests.status.harness import Status

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(status: Status) -> Samples:
    response = status.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def writes(samples: Samples, route: str, result: str) -> float:
    key = ("ledgermirror_status_management_writes_total", (("result", result), ("route", route)))
    return samples.get(key, 0.0)


def test_requests_writes_and_automatic_changes(status: Status) -> None:
    before = scrape(status)
    key = status.new_key()
    now = status.clock.now
    body = {
        "name": "Upgrade",
        "scheduled_for": (now + dt.timedelta(minutes=1)).isoformat(),
        "scheduled_until": (now + dt.timedelta(minutes=30)).isoformat(),
    }
    made = status.write("POST", "maintenances", body, key)["id"]
    refused = status.client.post("/manage/v1/maintenances", json=body, headers={"authorization": "Bearer wrong"})
    assert refused.status_code == 401
    status.get("summary.json")
    status.clock.advance(minutes=40)  # in progress, then completed, by the clock alone
    status.write("PATCH", f"maintenances/{made}", {"name": "Upgrade to v0.77"}, key)
    after = scrape(status)

    def delta(name: str, labels: tuple[tuple[str, str], ...]) -> float:
        return after.get((name, labels), 0.0) - before.get((name, labels), 0.0)

    assert writes(after, "/manage/v1/maintenances", "ok") - writes(before, "/manage/v1/maintenances", "ok") == 1
    assert writes(after, "/manage/v1/maintenances", "401") - writes(before, "/manage/v1/maintenances", "401") == 1
    patched = "/manage/v1/maintenances/{id}"
    assert writes(after, patched, "ok") - writes(before, patched, "ok") == 1
    assert delta("ledgermirror_status_automatic_changes_total", (("kind", "maintenance"),)) == 2
    summary = (("method", "GET"), ("route", "/api/v2/summary.json"), ("service", "status"), ("status", "2xx"))
    assert delta("ledgermirror_http_requests_total", summary) == 1
    assert not any(made in str(labels) for _, labels in after)
