"""Fixtures of the status service's tests: its tables cleared per test, a settable clock, an app per test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import pytest
from starlette.testclient import TestClient
from tests.status.harness import START, TABLES, SetClock, Status

from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import grant_read_access


@pytest.fixture(scope="session")
def status_database(database: Prepared) -> Prepared:
    async def grant() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            assert await grant_read_access(conn, Settings().api_role)
        finally:
            await conn.close()

    asyncio.run(grant())
    return database


@pytest.fixture
def clean(status_database: Prepared) -> Prepared:
    async def truncate() -> None:
        conn = await asyncpg.connect(status_database.owner_url)
        try:
            await conn.execute(f"truncate table {TABLES} cascade")
        finally:
            await conn.close()

    asyncio.run(truncate())
    return status_database


@pytest.fixture
def status_settings() -> StatusSettings:
    return StatusSettings(page_url="https://status.example.org")


@pytest.fixture
def status(clean: Prepared, status_settings: StatusSettings) -> Iterator[Status]:
    clock = SetClock(START)
    app = create_status_app(status_settings, clean.api_url, clean.owner_url, clock)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Status(client, clock, clean.owner_url)
