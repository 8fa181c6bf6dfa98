"""A small migration runner: numbered ``NNNN_name.sql`` files applied in order, each in its own transaction.

Applied versions are recorded with a checksum in ``ledgermirror_schema_history``; a recorded migration whose
file has since changed is an error, not something to re-run. A session advisory lock serialises concurrent runs.
The SQL files are written to be idempotent, so they can run over an existing reference mirror database.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from importlib import resources

import asyncpg

_log = logging.getLogger(__name__)
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x6C6D6967  # "lmig"

_HISTORY = """
create table if not exists ledgermirror_schema_history (
    version integer primary key,
    name text not null,
    checksum text not null,
    applied_at timestamptz not null default now()
)
"""


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def bundled_migrations() -> list[Migration]:
    folder = resources.files("ledgermirror") / "migrations"
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"duplicate migration versions in {versions}")
    return found


async def migrate(conn: asyncpg.Connection, migrations: list[Migration] | None = None) -> list[Migration]:
    """Apply what is not applied yet; return the migrations applied by this call."""
    pending = bundled_migrations() if migrations is None else migrations
    await conn.execute("select pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute(_HISTORY)
        rows = await conn.fetch("select version, checksum from ledgermirror_schema_history")
        applied = {row["version"]: row["checksum"] for row in rows}
        done: list[Migration] = []
        for migration in pending:
            recorded = applied.get(migration.version)
            if recorded is not None:
                if recorded != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.version:04d}_{migration.name} changed after it was applied"
                    )
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "insert into ledgermirror_schema_history (version, name, checksum) values ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            _log.info("applied migration", extra={"version": migration.version, "migration": migration.name})
            done.append(migration)
        return done
    finally:
        await conn.execute("select pg_advisory_unlock($1)", _LOCK_KEY)
