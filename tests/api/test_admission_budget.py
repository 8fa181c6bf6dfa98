"""The admission line's wait is its own budget, not the statement timeout's (``api/admission.py``): against the
embedded PostgreSQL, requests that each take most of the statement budget, served one at a time, keep the last
in line waiting longer than a statement may run, and it is answered, not refused. A wait past the admission
budget is still refused."""

from __future__ import annotations

import asyncio

import asyncpg

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan, Reply, get
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

PATH = "/api/v1/accounts/0.0.1001/allowances/crypto"
HOLD_SECONDS = 1.2
"""How long each request's statement waits on the table lock: under its statement budget of 2 s."""


def _settings(admission_wait_seconds: float) -> Settings:
    """One request at work at a time, a statement budget of 2 s, no response cache (each request is a query)."""
    return Settings(
        max_in_flight=1,
        statement_timeout_ms=2000,
        admission_wait_seconds=admission_wait_seconds,
        response_cache_entries=0,
        warm_up_seconds=0,
    )


async def _served_one_at_a_time(database: Prepared, settings: Settings, requests: int) -> list[Reply]:
    """``requests`` requests of :data:`PATH`, each held :data:`HOLD_SECONDS` by an exclusive lock on the table
    it reads; the lock is taken again before the next request is let in (``max_in_flight`` 1), so each one
    waits for it in turn."""
    app = create_app(settings, database.api_url)
    owner = await asyncpg.connect(database.owner_url)
    try:
        await owner.execute("begin; lock table crypto_allowance in access exclusive mode")
        async with Lifespan(app):
            tasks = [asyncio.create_task(get(app, PATH)) for _ in range(requests)]
            for _ in range(requests):
                await asyncio.sleep(HOLD_SECONDS)
                # the waiting statement gets the table; the lock is asked for again at once, ahead of the next
                # request's statement, which cannot start before this one's answer
                await owner.execute("commit; begin; lock table crypto_allowance in access exclusive mode")
            await owner.execute("commit")
            return list(await asyncio.gather(*tasks))
    finally:
        await owner.close()


def test_a_wait_in_line_longer_than_the_statement_budget_is_answered(database: Prepared) -> None:
    settings = _settings(30)
    replies = asyncio.run(_served_one_at_a_time(database, settings, 3))
    # the third waited about 2 x 1.2 s in line, over the 2 s a statement may run: with the statement timeout as
    # the wait's bound (before) it was refused
    assert [reply.status for reply in replies] == [200, 200, 200]


def test_a_wait_past_the_admission_budget_is_refused(database: Prepared) -> None:
    settings = _settings(0.5)
    replies = asyncio.run(_served_one_at_a_time(database, settings, 2))
    assert [reply.status for reply in replies] == [200, 503]
    assert b"Too many requests in progress" in replies[1].body
