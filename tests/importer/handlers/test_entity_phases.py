"""Balance deltas and a later upsert of the same entity written as one (``batch.Segment.entity_phases``):
the history row an upsert closes holds the balance the deltas before it left, as when the segments are written
one after the other."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import asyncpg
from tests.importer.handlers.items import T0, create_account, encoded, fetch, import_items
from tests.support import Ledger

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch, Segment
from ledgermirror.importer.handlers.batch_writer import coalesce, entity_waves, write_batch, write_segment

ACCOUNT = 1500
OTHER = 1501
HISTORY = (
    "select lower(timestamp_range) as since, upper(timestamp_range) as until, balance, balance_timestamp, memo"
    " from entity_history where id = $1 order by lower(timestamp_range)"
)
CURRENT = "select balance, balance_timestamp, memo, ethereum_nonce from entity where id = $1"


async def _noop(conn: asyncpg.Connection) -> dict[str, int]:
    return {}


def _batch() -> Batch:
    """Deltas, a step that says it touches neither, an upsert of one of the accounts, more deltas."""
    account, other = encoded(ACCOUNT), encoded(OTHER)
    batch = Batch()
    batch.add_balance(account, 5, T0 + 10)
    batch.add_balance(other, 3, T0 + 10)
    batch.defer(_noop, touches={"hook_storage": None})
    batch.upsert("entity", {"id": account, "memo": "second", "timestamp_range": T0 + 20})
    batch.add_balance(account, 7, T0 + 30)
    batch.defer(_noop, touches={"hook_storage": None})
    batch.upsert("entity", {"id": other, "ethereum_nonce": 4})  # starts no phase of its own
    batch.upsert("entity", {"id": account, "memo": "third", "timestamp_range": T0 + 40})
    batch.upsert("entity", {"id": other, "memo": "other", "timestamp_range": T0 + 40})
    return batch


def _write(url: str, segments: list[Segment] | None, batch: Batch) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            if segments is None:
                await write_batch(conn, batch)
                return
            async with conn.transaction():
                for segment in segments:  # apart: every segment's upserts, then its own running values
                    await write_segment(conn, segment)
        finally:
            await conn.close()

    asyncio.run(main())


def _accounts(url: str) -> None:
    import_items(url, create_account(ACCOUNT, at=T0, initial=100), create_account(OTHER, at=T0 + 1, initial=50))


def _tables(url: str) -> tuple[object, ...]:
    return tuple(fetch(url, sql, encoded(num)) for num in (ACCOUNT, OTHER) for sql in (HISTORY, CURRENT))


def test_the_segments_join_and_the_history_rows_keep_their_balances(ledger: Ledger) -> None:
    batch = _batch()
    (part,) = coalesce(batch.segments)
    assert [at for at, _ in part.rows.entity_phases] == [0, 1]
    _accounts(ledger.url)
    _write(ledger.url, None, _batch())
    # Each history row closes the balance the deltas before its upsert left.
    assert fetch(ledger.url, HISTORY, encoded(ACCOUNT)) == [
        {"since": T0, "until": T0 + 20, "balance": 105, "balance_timestamp": T0 + 10, "memo": "new"},
        {"since": T0 + 20, "until": T0 + 40, "balance": 112, "balance_timestamp": T0 + 30, "memo": "second"},
    ]
    assert fetch(ledger.url, CURRENT, encoded(ACCOUNT)) == [
        {"balance": 112, "balance_timestamp": T0 + 30, "memo": "third", "ethereum_nonce": 0}
    ]
    assert fetch(ledger.url, HISTORY, encoded(OTHER)) == [
        {"since": T0 + 1, "until": T0 + 40, "balance": 53, "balance_timestamp": T0 + 10, "memo": "new"}
    ]
    assert fetch(ledger.url, CURRENT, encoded(OTHER)) == [
        {"balance": 53, "balance_timestamp": T0 + 10, "memo": "other", "ethereum_nonce": 4}
    ]
    joined = _tables(ledger.url)
    ledger.reset()
    _accounts(ledger.url)
    _write(ledger.url, _batch().segments, Batch())
    assert _tables(ledger.url) == joined


CREATED = 1502
UNKNOWN = 1503
Op = Callable[[Batch], None]


def _version(num: int, at: int, memo: str, **more: Any) -> Op:
    return lambda batch: batch.upsert(
        "entity", {**ids.parts(encoded(num)), "memo": memo, "timestamp_range": at, **more}
    )


def _delta(num: int, amount: int, at: int) -> Op:
    return lambda batch: batch.add_balance(encoded(num), amount, at)


OPS: list[Op] = [
    _delta(ACCOUNT, 5, T0 + 10),
    _delta(OTHER, 3, T0 + 10),
    _version(ACCOUNT, T0 + 20, "a2"),
    _delta(ACCOUNT, 7, T0 + 30),
    _delta(CREATED, 40, T0 + 31),  # the funding transfer to a new account comes before its creation
    _version(CREATED, T0 + 32, "c1", created_timestamp=T0 + 32, type="ACCOUNT", deleted=False),
    _delta(CREATED, -4, T0 + 33),
    _version(CREATED, T0 + 34, "c2"),
    _version(OTHER, T0 + 40, "b2"),
    _delta(ACCOUNT, -2, T0 + 41),
    _version(ACCOUNT, T0 + 42, "a3"),
    _delta(ACCOUNT, -1, T0 + 42),  # the update's own fee follows it
    lambda batch: batch.upsert("entity", {"id": encoded(ACCOUNT), "ethereum_nonce": 3}),  # commutes
    _delta(UNKNOWN, 9, T0 + 50),  # an entity this mirror never saw created, then updated
    _version(UNKNOWN, T0 + 51, "d", type="ACCOUNT"),
]
VERSIONS = (
    "select id, lower(timestamp_range) as since, upper(timestamp_range) as until, balance, memo"
    " from entity_history union all"
    " select id, lower(timestamp_range), upper(timestamp_range), balance, memo from entity"
    " where id = any($1::bigint[]) order by id, since"
)
TRUE_VERSIONS = [  # every closed version holds the balance of every transfer before the version that closed it
    (ACCOUNT, T0, T0 + 20, 105, "new"),
    (ACCOUNT, T0 + 20, T0 + 42, 110, "a2"),
    (ACCOUNT, T0 + 42, None, 109, "a3"),
    (OTHER, T0 + 1, T0 + 40, 53, "new"),
    (OTHER, T0 + 40, None, 53, "b2"),
    (CREATED, T0 + 32, T0 + 34, 36, "c1"),
    (CREATED, T0 + 34, None, 36, "c2"),
    (UNKNOWN, T0 + 51, None, 9, "d"),
]


def _cut(at: int, touches: dict[str, None] | None) -> Batch:
    """:data:`OPS` with a deferred step before op ``at`` (none when ``at`` is past the end)."""
    batch = Batch()
    for index, op in enumerate(OPS):
        if index == at:
            batch.defer(_noop, touches=touches)
        op(batch)
    return batch


def _versions(url: str) -> list[tuple[Any, ...]]:
    numbers = [encoded(num) for num in (ACCOUNT, OTHER, CREATED, UNKNOWN)]
    return [tuple(row.values()) for row in fetch(url, VERSIONS, numbers)]


def test_a_closed_version_holds_every_transfer_before_it_wherever_the_segments_fall(ledger: Ledger) -> None:
    expected = [(encoded(num), *rest) for num, *rest in TRUE_VERSIONS]
    for at in range(len(OPS) + 1):
        for touches in (None, {"hook_storage": None}):  # a step written apart, and one the rows after may join
            ledger.reset()
            _accounts(ledger.url)
            _write(ledger.url, None, _cut(at, touches))
            assert _versions(ledger.url) == expected, (at, touches)


def test_two_phases_before_one_row_add_up() -> None:
    """A joined segment's phase and the segment's own, before the same row: the deltas summed, one wave."""
    batch = Batch()
    _delta(ACCOUNT, 5, T0 + 10)(batch)
    batch.defer(_noop, touches={"hook_storage": None})
    _delta(ACCOUNT, 7, T0 + 11)(batch)
    _version(ACCOUNT, T0 + 12, "x")(batch)
    (part,) = coalesce(batch.segments)
    account = encoded(ACCOUNT)
    assert part.rows.entity_phases == [(0, {account: [5, T0 + 10]}), (0, {account: [7, T0 + 11]})]
    rows = part.rows.upserts["entity"]
    assert entity_waves(rows, part.rows.entity_phases) == [({}, []), ({account: [12, T0 + 11]}, rows)]


def test_an_entitys_rows_wait_for_its_own_phases_only() -> None:
    rows = [{"id": 1, "n": 0}, {"id": 2, "n": 1}, {"id": 1, "n": 2}, {"id": 3, "n": 3}, {"id": 1, "n": 4}]
    phases = [(0, {1: [1, 1]}), (1, {2: [2, 2]}), (2, {1: [3, 3]}), (3, {3: [4, 4]})]
    assert entity_waves(rows, phases) == [
        ({}, []),
        ({1: [1, 1], 2: [2, 2], 3: [4, 4]}, [rows[0], rows[1], rows[3]]),
        ({1: [3, 3]}, [rows[2], rows[4]]),
    ]
