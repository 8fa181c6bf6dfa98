"""``/metrics`` of the query API, scraped and parsed with ``prometheus_client``'s own parser: requests by route
template (never the raw path), method and status class; latency; the response cache; the database pool;
statement timeouts and unavailable answers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database, api_connections
from ledgermirror.metrics.api import ApiMetrics
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def requests(samples: Samples, route: str, status: str, method: str = "GET") -> float:
    labels = (("method", method), ("route", route), ("service", "api"), ("status", status))
    return samples.get(("ledgermirror_http_requests_total", labels), 0.0)


@pytest.fixture
def fresh(database: Prepared, ledger: Ledger) -> Iterator[TestClient]:
    """An app of its own, so the counts start at zero, on empty tables (``ledger``: whatever an earlier test
    loaded, e.g. account 0.0.1001, is gone)."""
    with TestClient(create_app(Settings(), database.api_url), raise_server_exceptions=False) as client:
        yield client


def test_requests_by_route_template_status_and_cache(fresh: TestClient) -> None:
    for _ in range(3):
        assert fresh.get("/api/v1/tokens?limit=1").status_code == 200
    assert fresh.get("/api/v1/accounts/0.0.1001").status_code == 404
    assert fresh.get("/api/v1/accounts/0.0.1002").status_code == 404
    assert fresh.get("/api/v1/tokens?limit=0").status_code == 400
    assert fresh.get("/api/v1/no-such-route/12345").status_code == 404
    response = fresh.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert response.headers["cache-control"] == "no-store"
    assert "content-encoding" not in response.headers
    samples = scrape(response.text)
    assert requests(samples, "/api/v1/tokens", "2xx") == 3
    assert requests(samples, "/api/v1/tokens", "4xx") == 1
    assert requests(samples, "/api/v1/accounts/{idOrAliasOrEvmAddress}", "4xx") == 2
    assert requests(samples, "unmatched", "4xx") == 1
    assert not any("0.0.1001" in str(labels) or "12345" in str(labels) for _, labels in samples)
    latency = (
        "ledgermirror_http_request_duration_seconds_count",
        (("route", "/api/v1/tokens"), ("service", "api")),
    )
    assert samples[latency] == 4
    # the same URL twice more: answered from the response cache
    assert samples[("ledgermirror_api_response_cache_total", (("result", "hit"),))] == 2
    assert samples[("ledgermirror_api_response_cache_total", (("result", "miss"),))] == 4
    in_flight = ("ledgermirror_http_requests_in_flight", (("service", "api"),))
    assert samples[in_flight] == 1  # the scrape itself
    pool = {
        state: samples[("ledgermirror_api_db_pool_connections", (("state", state),))]
        for state in ("size", "in_use", "waiting")
    }
    assert pool["size"] >= 1 and pool["in_use"] == 0 and pool["waiting"] == 0


def test_head_and_other_methods(fresh: TestClient) -> None:
    assert fresh.head("/metrics").status_code == 200
    assert fresh.post("/metrics").status_code in (404, 405)


def test_statement_timeouts_and_unavailable(database: Prepared) -> None:
    metrics = ApiMetrics()

    async def run() -> None:
        pool = api_connections(database.api_url, Settings(statement_timeout_ms=50))
        db = Database(pool, observer=metrics)
        try:
            with pytest.raises(DatabaseUnavailable):
                await db.fetchval("select pg_sleep(2)")
            assert await db.fetchval("select 1") == 1
        finally:
            await db.close()
        broken = Database(api_connections(database.api_url, Settings()), acquire_timeout=1, observer=metrics)
        await broken.close()
        with pytest.raises(DatabaseUnavailable):
            await broken.fetchval("select 1")  # the pool is closed: the connection-level failure is a 503

    asyncio.run(run())
    samples = scrape(generate_latest(metrics.registry).decode())
    assert samples[("ledgermirror_api_statement_timeouts_total", ())] == 1
    assert samples[("ledgermirror_api_database_unavailable_total", ())] == 2
    assert samples[("ledgermirror_api_db_pool_connections", (("state", "waiting"),))] == 0
    assert samples[("ledgermirror_api_db_pool_connections", (("state", "in_use"),))] == 0
