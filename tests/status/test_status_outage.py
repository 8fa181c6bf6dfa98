"""The status service under concurrent load while the database stops: 200s, then 503s, never a 500."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from tests.live_server import bounded_server, load_through
from tests.status.harness import Status
from tests.support import start_server, stop_server

from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings

PATHS = ("/api/v2/summary.json?{}", "/api/v2/components.json?{}", "/api/v2/incidents.json?{}", "/?{}")


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_database_stopped_under_concurrent_load_never_gives_500(
    status: Status, clean: Prepared, mode: str
) -> None:
    key = status.new_key()
    for n in range(5):
        status.write("POST", "components", {"name": f"component {n}"}, key)
    app = create_status_app(StatusSettings(cache_seconds=0), clean.api_url, clean.owner_url)
    with bounded_server(app, Settings()) as port:

        async def drive() -> list[tuple[str, int, bytes]]:
            async def outage() -> None:
                await asyncio.sleep(1.5)
                await asyncio.to_thread(stop_server, clean, mode)

            return await load_through(f"http://127.0.0.1:{port}", PATHS, asyncio.create_task(outage()), 1.5)

        try:
            answers = asyncio.run(drive())
        finally:
            start_server(clean)
    statuses = Counter(code for _, code, _ in answers)
    assert set(statuses) <= {200, 503}, statuses
    assert statuses[200] > 0 and statuses[503] > 0, statuses
