"""Test helpers shared by the suites."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg


class Ledger:
    """Writes fixture rows (in the reference spec-file setup language) as the database owner."""

    def __init__(self, url: str) -> None:
        self.url = url

    def load(self, setup: dict[str, Any]) -> None:
        asyncio.run(self._load(setup))

    def reset(self) -> None:
        asyncio.run(self._reset())

    def execute(self, sql: str, *args: Any) -> None:
        asyncio.run(self._execute(sql, *args))

    async def _load(self, setup: dict[str, Any]) -> None:
        from ledgermirror.conformance.loader import load_setup

        conn = await asyncpg.connect(self.url)
        try:
            await load_setup(conn, setup, spec="test")
        finally:
            await conn.close()

    async def _reset(self) -> None:
        from ledgermirror.conformance.loader import reset

        conn = await asyncpg.connect(self.url)
        try:
            await reset(conn)
        finally:
            await conn.close()

    async def _execute(self, sql: str, *args: Any) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await conn.execute(sql, *args)
        finally:
            await conn.close()
