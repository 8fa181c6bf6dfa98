"""What PostgreSQL did in the background of an import: WAL, checkpoints and autovacuum, read from its statistics
views before and after, as counts (which the host's speed does not move, unlike CPU seconds).

- ``pg_stat_wal``: WAL records, full-page images (the first change of a page after a checkpoint writes the whole
  page) and bytes;
- ``pg_stat_bgwriter`` (and ``pg_stat_checkpointer`` where the server has it, PostgreSQL 17 on): checkpoints
  by time and by WAL size, and the buffers they wrote;
- ``pg_stat_user_tables``: the autovacuums and autoanalyzes of each table of the database.

Every view is read as JSON (``to_jsonb``), so a column a version renamed or lacks is simply not reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson

_VIEWS = ("pg_stat_wal", "pg_stat_bgwriter", "pg_stat_checkpointer")
"""The cluster-wide counters, each a single row."""

WAL_COUNTERS = ("wal_records", "wal_fpi", "wal_bytes")
CHECKPOINT_COUNTERS = (
    "checkpoints_timed",
    "checkpoints_req",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    # pg_stat_checkpointer (PostgreSQL 17 on)
    "num_timed",
    "num_requested",
    "buffers_written",
)
_REPORTED = WAL_COUNTERS + CHECKPOINT_COUNTERS

_TABLES = """
select relname, autovacuum_count, autoanalyze_count
from pg_stat_user_tables
where autovacuum_count > 0 or autoanalyze_count > 0
"""


@dataclass(frozen=True, slots=True)
class ServerWork:
    counters: dict[str, float]
    """The cluster's cumulative counters of :data:`_REPORTED` this server has."""
    autovacuums: dict[str, int]
    """Autovacuums by table (of the connected database)."""
    autoanalyzes: dict[str, int]


async def read(conn: asyncpg.Connection) -> ServerWork:
    """The counters now. A backend flushes its WAL counters after a transaction, at most once a second (and
    when it exits), so this connection's own are flushed first (``pg_stat_force_next_flush``, PostgreSQL 15 on)
    and the import's other connections must have closed or idled a second."""
    if conn.get_server_version().major >= 15:
        await conn.execute("select pg_stat_force_next_flush()")
    present = {
        str(view)
        for (view,) in await conn.fetch("select viewname from pg_catalog.pg_views where schemaname = 'pg_catalog'")
    }
    counters: dict[str, float] = {}
    for view in (view for view in _VIEWS if view in present):
        row: dict[str, Any] = orjson.loads(
            await conn.fetchval(f"select to_jsonb(v)::text from pg_catalog.{view} v")
        )
        counters.update((name, float(row[name])) for name in _REPORTED if row.get(name) is not None)
    autovacuums: dict[str, int] = {}
    autoanalyzes: dict[str, int] = {}
    for name, vacuums, analyzes in await conn.fetch(_TABLES):
        autovacuums[str(name)] = int(vacuums)
        autoanalyzes[str(name)] = int(analyzes)
    return ServerWork(counters, autovacuums, autoanalyzes)


def during(before: ServerWork, after: ServerWork, transactions: int) -> dict[str, Any]:
    """The background work between two readings, for the report: each counter's difference and, for WAL, a
    transaction's share; the tables autovacuumed or autoanalyzed meanwhile, with how many times."""
    work: dict[str, Any] = {
        name: round(after.counters[name] - before.counters.get(name, 0.0))
        for name in _REPORTED
        if name in after.counters
    }
    for name in WAL_COUNTERS:
        if name in work:
            work[f"{name}_per_transaction"] = round(work[name] / max(transactions, 1), 2)
    work["autovacuums"] = _grown(before.autovacuums, after.autovacuums)
    work["autoanalyzes"] = _grown(before.autoanalyzes, after.autoanalyzes)
    return work


def _grown(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {
        name: count - before.get(name, 0) for name, count in sorted(after.items()) if count > before.get(name, 0)
    }
