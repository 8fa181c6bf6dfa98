"""``bench/tables``: every table's rows of a ``bench/import --data-dir`` database, as a row count and an md5 per
table, compared with another run's (``--against``): the check that an importer change leaves the tables
byte-identical (docs/performance.md, "The importer's own CPU").

The md5 is over every row as PostgreSQL's text, sorted, all columns but the wall clock's (when a file was loaded
or evidence imported: ``WALL_CLOCK_COLUMNS``). The folder's embedded server is started, read and stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import asyncpg

from ledgermirror.db.sql import quote_identifier
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

WALL_CLOCK_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "record_file": ("load_start", "load_end"),
    "account_balance_file": ("load_start", "load_end"),
    "signature_evidence": ("imported_at",),
}
_TABLES = (
    "select tablename from pg_tables where schemaname = 'public' and tablename <> 'ledgermirror_schema_history' "
    "order by 1"
)
_COLUMNS = (
    "select table_name, column_name from information_schema.columns where table_schema = 'public' order by 1, 2"
)
_DIGEST = (
    "select count(*), md5(coalesce(string_agg(r::text, '|' order by r::text), '')) from (select {} from {}) r"
)


async def digest(url: str) -> dict[str, list[int | str]]:
    """Table -> [row count, md5 of its rows]."""
    conn = await asyncpg.connect(url)
    try:
        found: dict[str, list[int | str]] = {}
        columns_of: dict[str, list[str]] = {}
        for table, column in await conn.fetch(_COLUMNS):
            if column not in WALL_CLOCK_COLUMNS.get(table, ()):
                columns_of.setdefault(table, []).append(column)
        for (name,) in await conn.fetch(_TABLES):
            columns = columns_of.get(name, [])
            listed = ", ".join(quote_identifier(column) for column in columns)
            row = await conn.fetchrow(_DIGEST.format(listed, quote_identifier(name)))
            assert row is not None  # an aggregate gives one row
            found[name] = [int(row[0]), str(row[1])]
        return found
    finally:
        await conn.close()


def digest_folder(data_dir: Path) -> dict[str, list[int | str]]:
    """:func:`digest` of the embedded database in ``data_dir`` (started and stopped here)."""
    prepared = prepare(Settings(), data_dir=data_dir, durable=False)
    try:
        return asyncio.run(digest(prepared.owner_url))
    finally:
        prepared.stop()


def differing(one: Mapping[str, object], other: Mapping[str, object]) -> list[str]:
    """Tables whose count or md5 differ, or that only one side has."""
    return [name for name in sorted(set(one) | set(other)) if one.get(name) != other.get(name)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/tables", description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="a bench/import --data-dir folder")
    parser.add_argument("--json", type=Path, help="write the digests here")
    parser.add_argument("--against", type=Path, help="another run's --json: exit 1 when a table differs")
    args = parser.parse_args(argv)
    found = digest_folder(args.data_dir)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    rows = sum(int(count) for count, _ in found.values())
    print(f"{len(found)} tables, {rows:,} rows")
    if args.against is None:
        return 0
    different = differing(found, json.loads(args.against.read_text()))
    print(f"differing tables: {', '.join(different) if different else 'none'}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
