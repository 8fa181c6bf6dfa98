"""The database stopped while a real server is under concurrent load: every answer is a 200 or our 503, never a
500 (connections lost mid-query included), and the service recovers by itself once the database is back."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
import orjson
import pytest
from tests.live_server import bounded_server, load_through
from tests.support import Ledger, start_server, stop_server

from ledgermirror.api.app import create_app
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

UNAVAILABLE = {"_status": {"messages": [{"message": "Service unavailable"}]}}
SETUP = {
    "entities": [{"num": n, "type": "TOKEN"} for n in range(100, 400)],
    "tokens": [{"token_id": f"0.0.{n}", "name": f"Token number {n}"} for n in range(100, 400)],
}
PATHS = (
    "/api/v1/tokens?limit=100&token.id=gte:{}",
    "/api/v1/tokens?order=desc&limit=50&token.id=lte:{}",
    "/health/readiness?{}",
)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_database_stopped_under_concurrent_load_gives_503_never_500(
    database: Prepared, ledger: Ledger, mode: str
) -> None:
    ledger.load(SETUP)
    settings = Settings()
    with bounded_server(create_app(settings, database.api_url), settings) as port:
        base = f"http://127.0.0.1:{port}"

        async def drive() -> list[tuple[str, int, bytes]]:
            async def outage() -> None:
                await asyncio.sleep(1.5)  # the load is running: queries are in flight when the server goes
                await asyncio.to_thread(stop_server, database, mode)

            return await load_through(base, PATHS, asyncio.create_task(outage()), after_outage=1.5, clients=80)

        try:
            answers = asyncio.run(drive())
        finally:
            start_server(database)
        statuses = Counter(status for _, status, _ in answers)
        assert set(statuses) <= {200, 503}, statuses
        assert statuses[200] > 0 and statuses[503] > 0, statuses
        api_503 = [body for path, status, body in answers if status == 503 and path.startswith("/api/")]
        assert api_503 and all(orjson.loads(body) == UNAVAILABLE for body in api_503)
        deadline = time.monotonic() + 30  # the pool reconnects on its own
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as client:
            while client.get("/api/v1/tokens?limit=3").status_code != 200:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert len(client.get("/api/v1/tokens?limit=4").json()["tokens"]) == 4
