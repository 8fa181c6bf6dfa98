"""Helpers of the status tests: a settable clock and a per-test handle on the service."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
from starlette.testclient import TestClient

from ledgermirror.status import keys

T = TypeVar("T")
START = dt.datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=dt.UTC)
TABLES = (
    "status.audit_log, status.api_key, status.incident_update, status.incident_component, "
    "status.component_status_history, status.incident, status.component"
)


class SetClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start

    def now_ns(self) -> int:
        return int(self.now.timestamp()) * 1_000_000_000 + self.now.microsecond * 1000

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


class Status:
    """One test's view of the service: HTTP client, clock, owner-side helpers."""

    def __init__(self, client: TestClient, clock: SetClock, owner_url: str) -> None:
        self.client = client
        self.clock = clock
        self.owner_url = owner_url

    def run(self, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        async def go() -> T:
            conn = await asyncpg.connect(self.owner_url)
            try:
                return await work(conn)
            finally:
                await conn.close()

        result = asyncio.run(go())
        self.client.app.state.status.cache.clear()  # type: ignore[attr-defined]
        return result

    def new_key(self, name: str = "tests") -> str:
        _, token = self.run(lambda conn: keys.create(conn, name, self.clock.now, "tests"))
        return token

    def get(self, path: str) -> Any:
        response = self.client.get(f"/api/v2/{path}")
        assert response.status_code == 200, response.text
        return response.json()

    def write(self, method: str, path: str, body: dict[str, Any], token: str) -> Any:
        response = self.client.request(
            method, f"/manage/v1/{path}", json=body, headers={"authorization": f"Bearer {token}"}
        )
        assert response.status_code in (200, 201), response.text
        return response.json()
