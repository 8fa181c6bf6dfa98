"""Writing a batch: its segments in order through ``db/`` (COPY, upserts, running values, deferred steps) in
one database transaction (see :mod:`.batch`)."""

from __future__ import annotations

from typing import Any

import asyncpg

from ledgermirror.db import running, write
from ledgermirror.db.schema import NO_DEFAULT, RANGE_COLUMN
from ledgermirror.db.schema import table as table_model
from ledgermirror.importer.handlers.batch import Batch, Segment
from ledgermirror.importer.handlers.entity_stakes import update_entity_stakes

_UPSERT_FIRST = ("entity",)
_UPSERT_LAST = ("token", "token_account", "nft")  # the reference's flush order (DomainClassComparator)


def _upsert_order(names: list[str]) -> list[str]:
    middle = [name for name in names if name not in _UPSERT_FIRST and name not in _UPSERT_LAST]
    return [
        *(name for name in _UPSERT_FIRST if name in names),
        *middle,
        *(name for name in _UPSERT_LAST if name in names),
    ]


def _add(total: dict[str, int], more: dict[str, int] | None) -> None:
    for name, count in (more or {}).items():
        total[name] = total.get(name, 0) + count


def _uniform(table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with every nullable column without default given (None where unset), so that the writer stages
    them in few groups (one per set of columns). For those columns None and "not given" mean the same to
    ``db.write.upsert`` (inserted as NULL, or "keep the existing value"); columns with a default and columns a
    NULL clears (``replace_nulls``) are left as the handler gave them."""
    model = table_model(table)
    fill = [
        column.name
        for column in model.columns
        if column.nullable
        and column.default is NO_DEFAULT
        and column.name != RANGE_COLUMN
        and column.name not in model.replace_nulls
    ]
    for row in rows:
        for name in fill:
            if name not in row:
                row[name] = None
    return rows


async def write_segment(
    conn: asyncpg.Connection, segment: Segment, entity_balances: dict[int, list[int]] | None = None
) -> dict[str, int]:
    """The segment's rows, upserts, running values and step; ``entity_balances`` (default: the segment's)
    are the entity balance deltas to apply now."""
    counts: dict[str, int] = {}
    balances = segment.entity_balances if entity_balances is None else entity_balances
    for name, rows in segment.inserts.items():
        _add(counts, await write.copy_rows(conn, name, rows))
    for name in _upsert_order(list(segment.upserts)):
        rows = segment.upserts[name]
        taken = await write.upsert(conn, name, _uniform(name, rows))
        _add(counts, {name: taken})
        if name == "entity":
            await running.clear_empty_public_keys(conn, [row["id"] for row in rows if row.get("public_key") == ""])
        elif name == "node":
            cleared = [row["node_id"] for row in rows if (row.get("grpc_proxy_endpoint") or {}).get("port") == -1]
            await running.clear_proxy_endpoint_sentinels(conn, cleared)
    if balances:
        await running.add_entity_balances(conn, [(key, delta, stamp) for key, (delta, stamp) in balances.items()])
    if segment.token_balances:
        await running.add_token_balances(
            conn,
            [
                (account, token, delta, stamp)
                for (account, token), (delta, stamp) in segment.token_balances.items()
            ],
        )
    if segment.allowance_debits:
        await running.add_allowance_debits(
            conn,
            [
                (owner, spender, token, amount)
                for (owner, spender, token), amount in segment.allowance_debits.items()
            ],
        )
    if segment.step is not None:
        _add(counts, await segment.step(conn))
    return counts


def _entities_upserted_after(segments: list[Segment]) -> list[set[int]]:
    """For each segment, the entity ids that a later segment of the batch upserts."""
    after: list[set[int]] = []
    seen: set[int] = set()
    for segment in reversed(segments):
        after.append(set(seen))
        seen.update(row["id"] for row in segment.upserts.get("entity", ()))
    after.reverse()
    return after


async def write_batch(conn: asyncpg.Connection, batch: Batch) -> dict[str, int]:
    """Write the batch in one database transaction (the caller's, if one is open); rows written by table.

    Entity balance deltas are carried to the end of the batch and applied in one statement, except for an
    entity that a later segment upserts (created, updated, or a running value such as its nonce): its deltas
    are applied with their own segment, before that upsert (which may create the row, close its version into
    ``entity_history`` or set ``balance_timestamp``). No deferred step reads ``entity``, so the result is the
    same as applying every segment's deltas in turn, with one statement per batch instead of one per segment.

    A batch holding a NodeStakeUpdate ends with the pending rewards of the period it ended (``entity_stakes``),
    read from the balances and entity versions written before.
    """
    counts: dict[str, int] = {}
    upserted_after = _entities_upserted_after(batch.segments)
    carried: dict[int, list[int]] = {}
    async with conn.transaction():
        for segment, later in zip(batch.segments, upserted_after, strict=True):
            now: dict[int, list[int]] = {}
            for key, (delta, stamp) in segment.entity_balances.items():
                if key in later:
                    now[key] = [delta, stamp]
                elif (held := carried.get(key)) is not None:
                    held[0] += delta
                    held[1] = stamp
                else:
                    carried[key] = [delta, stamp]
            _add(counts, await write_segment(conn, segment, now))
        if carried:
            await running.add_entity_balances(
                conn, [(key, delta, stamp) for key, (delta, stamp) in carried.items()]
            )
        if any("node_stake" in segment.inserts for segment in batch.segments):
            _add(counts, await update_entity_stakes(conn))
    return counts
