"""The overlapped import's writer (``importer/overlap.py``): the works handed to it run one at a time, in the
order they were handed over, on its own connection to the real embedded server; once one fails, the works
handed over after it are not run at all (each was built on the ones before); and the joined guard of several
batches in flight answers for all of them."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import asyncpg
import pytest
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.overlap import SWITCH_INTERVAL, BackgroundWriter, InFlight, WriterStopped
from ledgermirror.runtime import Prepared

_TABLE = "create table if not exists writer_test_log (n int, started timestamptz, ended timestamptz)"


def _work(n: int, *, fail: bool = False) -> Any:
    async def work(conn: asyncpg.Connection) -> int:
        async with conn.transaction():
            started = await conn.fetchval("select clock_timestamp()")
            await asyncio.sleep(0.05)  # a later work started meanwhile would show as overlapping
            if fail:
                await conn.execute("select 1 / 0")
            await conn.execute("insert into writer_test_log values ($1, $2, clock_timestamp())", n, started)
        return n

    return work


def test_works_run_one_at_a_time_in_order_and_none_after_a_failure(database: Prepared, ledger: Ledger) -> None:
    default = sys.getswitchinterval()

    async def go() -> tuple[list[Any], list[asyncpg.Record], float, float]:
        conn = await asyncpg.connect(database.owner_url)
        await conn.execute(_TABLE)
        await conn.execute("truncate writer_test_log")
        writer = BackgroundWriter(conn)
        try:
            futures = [writer.submit(_work(n, fail=n == 3)) for n in range(1, 6)]
            during = sys.getswitchinterval()
            outcomes = await asyncio.gather(*futures, return_exceptions=True)
            logged = await conn.fetch("select n, started, ended from writer_test_log order by started")
            after = sys.getswitchinterval()
        finally:
            writer.close()
            await conn.execute("drop table writer_test_log")
            await conn.close()
        return outcomes, logged, during, after

    outcomes, logged, during, after = asyncio.run(go())
    assert outcomes[:2] == [1, 2]
    assert isinstance(outcomes[2], asyncpg.DivisionByZeroError)
    assert all(isinstance(outcome, WriterStopped) for outcome in outcomes[3:])
    assert [row["n"] for row in logged] == [1, 2]  # the failed one rolled back; the two after it never ran
    assert logged[0]["ended"] <= logged[1]["started"]  # one at a time
    assert during == pytest.approx(SWITCH_INTERVAL)  # lowered while works are handed over
    assert after == pytest.approx(default)  # restored once none is left


def test_the_joined_guard_holds_every_batch_and_waits_for_the_last() -> None:
    async def go() -> None:
        first, second = Batch(), Batch()
        first.upsert("entity", {"id": 5, "alias": b"\x01" * 33, "timestamp_range": 1})
        second.upsert("entity", {"id": 6, "evm_address": b"\x02" * 20, "timestamp_range": 2})
        second.upsert("entity", {"id": 7, "deleted": True, "timestamp_range": 2})
        guards = [InFlight.of(first), InFlight.of(second)]
        loop = asyncio.get_running_loop()
        commits = [loop.create_future(), loop.create_future()]
        for guard, commit in zip(guards, commits, strict=True):
            guard.follow(commit)
        joined = InFlight.joined(guards)
        assert joined.keys == {b"\x01" * 33, b"\x02" * 20}
        assert joined.holders == {5, 6, 7} and joined.addresses == {6}
        commits[0].set_result(None)
        assert not joined.done.done()  # the second batch still in flight
        waiting = asyncio.ensure_future(joined.committed())
        await asyncio.sleep(0)
        assert not waiting.done()
        commits[1].set_result(None)
        await waiting
        assert joined.waits == 1

    asyncio.run(go())


@pytest.mark.parametrize("count", [1, 3])
def test_a_joined_guard_of_one_or_more_is_done_with_the_last(count: int) -> None:
    async def go() -> None:
        loop = asyncio.get_running_loop()
        guards = [InFlight.of(Batch()) for _ in range(count)]
        for guard in guards:
            guard.follow(loop.create_future())
        joined = InFlight.joined(guards)
        assert joined.done is guards[-1].done

    asyncio.run(go())
