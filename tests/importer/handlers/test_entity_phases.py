"""Balance deltas and a later upsert of the same entity written as one (``batch_writer.Written.entity_phases``):
the history row an upsert closes holds the balance the deltas before it left, as when the segments are written
one after the other."""

from __future__ import annotations

import asyncio

import asyncpg
from tests.importer.handlers.items import T0, create_account, encoded, fetch, import_items
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch, Segment
from ledgermirror.importer.handlers.batch_writer import coalesce, write_batch, write_segment

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
    assert [at for at, _ in part.entity_phases] == [0, 1]
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
