"""Signature evidence: per imported record file or block, the book nodes whose signatures were valid, present
but failing, or missing (table ``signature_evidence``). The importer appends rows in its commit transaction and
notifies :data:`CHANNEL` (delivered when it commits); the status service reads them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from ledgermirror.db import write
from ledgermirror.db.sql import template

TABLE = "signature_evidence"
CHANNEL = "ledgermirror_evidence"
"""Notified (payload: the newest consensus end) in every import transaction that wrote evidence."""
COLUMNS = ("consensus_end", "name", "imported_at", "valid_nodes", "failed_nodes", "missing_nodes")

_RECENT_SQL = """
select consensus_end, name, imported_at, valid_nodes, failed_nodes, missing_nodes
from signature_evidence order by consensus_end desc limit {limit}
"""

_SINCE_SQL = """
select consensus_end, name, imported_at, valid_nodes, failed_nodes, missing_nodes
from signature_evidence where consensus_end >= {since} order by consensus_end
"""

_NOTIFY_SQL = "select pg_notify({channel}, {payload})"


@dataclass(frozen=True, slots=True)
class Evidence:
    consensus_end: int
    name: str
    imported_at: int
    """Nanoseconds since the epoch when the importer accepted the file."""
    valid_nodes: tuple[int, ...]
    failed_nodes: tuple[int, ...]
    missing_nodes: tuple[int, ...]


def _of(row: asyncpg.Record) -> Evidence:
    return Evidence(
        row["consensus_end"],
        row["name"],
        row["imported_at"],
        tuple(row["valid_nodes"]),
        tuple(row["failed_nodes"]),
        tuple(row["missing_nodes"]),
    )


async def append(conn: asyncpg.Connection[Any], records: Sequence[tuple[Any, ...]]) -> int:
    """Append evidence records (in :data:`COLUMNS` order) and notify :data:`CHANNEL` with the newest consensus
    end; rows written."""
    if not records:
        return 0
    counts = await write.copy_records(conn, TABLE, COLUMNS, records)
    statement = template(_NOTIFY_SQL, channel=CHANNEL, payload=str(records[-1][0]))
    await conn.execute(statement.text, *statement.args)
    return counts.get(TABLE, 0)


async def recent(conn: asyncpg.Connection[Any], limit: int) -> list[Evidence]:
    """The ``limit`` newest rows, newest first."""
    statement = template(_RECENT_SQL, limit=limit)
    return [_of(row) for row in await conn.fetch(statement.text, *statement.args)]


async def since(conn: asyncpg.Connection[Any], consensus_end: int) -> list[Evidence]:
    """Every row from ``consensus_end`` on, oldest first."""
    statement = template(_SINCE_SQL, since=consensus_end)
    return [_of(row) for row in await conn.fetch(statement.text, *statement.args)]


_NEWEST_FILE_SQL = "select consensus_end, load_end from record_file order by consensus_end desc limit 1"


async def newest_file(conn: asyncpg.Connection[Any]) -> tuple[int, int] | None:
    """The newest imported file's consensus end and when it was imported (both nanoseconds), if any."""
    row = await conn.fetchrow(_NEWEST_FILE_SQL)
    if row is None:
        return None
    return int(row["consensus_end"]), int(row["load_end"]) * 1_000_000


_SIGNING_SQL = """
select (e.consensus_end - {since}) / {bucket} as slot, x.node,
       count(*) filter (where x.kind = 'valid') as valid,
       count(*) filter (where x.kind = 'failed') as failed,
       count(*) filter (where x.kind = 'missing') as missing
from signature_evidence e
cross join lateral (
    select unnest(e.valid_nodes) as node, 'valid' as kind
    union all select unnest(e.failed_nodes), 'failed'
    union all select unnest(e.missing_nodes), 'missing'
) x
where e.consensus_end >= {since}
group by slot, x.node
"""


@dataclass(frozen=True, slots=True)
class Signing:
    """One node's signatures over one time slot: files signed validly, with a failing signature, without one."""

    slot: int
    node_id: int
    valid: int
    failed: int
    missing: int


async def signing(conn: asyncpg.Connection[Any], since: int, bucket: int) -> list[Signing]:
    """Per node and per ``bucket`` nanoseconds from ``since`` (by consensus end), its signing counts."""
    statement = template(_SIGNING_SQL, since=since, bucket=bucket)
    rows = await conn.fetch(statement.text, *statement.args)
    return [
        Signing(int(row["slot"]), int(row["node"]), int(row["valid"]), int(row["failed"]), int(row["missing"]))
        for row in rows
    ]
