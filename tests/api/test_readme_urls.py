"""Every URL the README offers a newcomer answers 200 with real content on the demo data (``ledgermirror demo``
loads the ``small`` profile with seed 1): no empty list a reader would take for a broken service."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import asyncpg
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror import dataset
from ledgermirror.runtime import Prepared

README = Path(__file__).resolve().parents[2] / "README.md"
BASE = "http://127.0.0.1:5551"
URLS = sorted(set(re.findall(r"<" + re.escape(BASE) + r"(/[^>]*)>", README.read_text())))


async def _load_demo(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await dataset.load(conn, "small")
    finally:
        await conn.close()


def empty_lists(body: Any) -> list[str]:
    """The top-level lists of an answer that are empty: the answer shows nothing where it should."""
    if not isinstance(body, dict):
        return []
    return [key for key, value in body.items() if isinstance(value, list) and not value]


def test_the_readme_offers_urls() -> None:
    assert len(URLS) >= 20
    assert "/api/v1/accounts/0.0.1061/allowances/crypto" in URLS


def test_every_readme_url_shows_demo_content(client: TestClient, ledger: Ledger, database: Prepared) -> None:
    asyncio.run(_load_demo(database.owner_url))
    failures = []
    for path in URLS:
        response = client.get(path)
        if response.status_code != 200 or not response.content:
            failures.append(f"{path}: {response.status_code}")
            continue
        if response.headers["content-type"].startswith("application/json"):
            body = response.json()
            empty = [] if body else ["{}"]
            empty += empty_lists(body)
            if empty:
                failures.append(f"{path}: empty {empty}")
    assert failures == []
