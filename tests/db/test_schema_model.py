"""The table model (the db/schema/ package) against the catalog of a freshly migrated database, in both directions:
a table, column, type, nullability, default or key in one and not the other fails."""

from __future__ import annotations

import asyncio
import pkgutil
from importlib import import_module
from typing import Any

import asyncpg
import pytest

from ledgermirror.db import schema
from ledgermirror.runtime import Prepared

# The migration runner's bookkeeping table lives in public but is not part of the mirror schema.
NOT_MODELLED = frozenset({"ledgermirror_schema_history"})

COLUMNS_SQL = """
select c.table_name, c.column_name, c.ordinal_position, c.is_nullable, c.column_default,
       format_type(a.atttypid, a.atttypmod) as type
from information_schema.columns c
join pg_catalog.pg_attribute a
  on a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass and a.attname = c.column_name
where c.table_schema = 'public'
order by c.table_name, c.ordinal_position
"""

TABLES_SQL = """
select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'
"""

PRIMARY_KEYS_SQL = """
select tc.table_name, array_agg(k.column_name::text order by k.ordinal_position) as columns
from information_schema.table_constraints tc
join information_schema.key_column_usage k
  on k.constraint_schema = tc.constraint_schema and k.constraint_name = tc.constraint_name
where tc.table_schema = 'public' and tc.constraint_type = 'PRIMARY KEY'
group by tc.table_name
"""

# Unique indexes that are not constraints (the reference's conflict key of token_airdrop).
UNIQUE_INDEXES_SQL = """
select t.relname as table_name,
       array(select a.attname::text from unnest(i.indkey) with ordinality as k(attnum, n)
             join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n) as columns
from pg_index i
join pg_class t on t.oid = i.indrelid
join pg_namespace s on s.oid = t.relnamespace
where s.nspname = 'public' and i.indisunique and not i.indisprimary
"""


async def _catalog(url: str) -> dict[str, Any]:
    conn = await asyncpg.connect(url)
    try:
        columns = await conn.fetch(COLUMNS_SQL)
        defaults: dict[tuple[str, str], Any] = {}
        for row in columns:
            if row["column_default"] is not None:
                # evaluate the stored default expression to the value it gives
                defaults[row["table_name"], row["column_name"]] = await conn.fetchval(
                    f"select {row['column_default']}"
                )
        return {
            "tables": {row["table_name"] for row in await conn.fetch(TABLES_SQL)},
            "columns": columns,
            "defaults": defaults,
            "primary": {row["table_name"]: tuple(row["columns"]) for row in await conn.fetch(PRIMARY_KEYS_SQL)},
            "unique": [(row["table_name"], tuple(row["columns"])) for row in await conn.fetch(UNIQUE_INDEXES_SQL)],
        }
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def catalog(database: Prepared) -> dict[str, Any]:
    return asyncio.run(_catalog(database.owner_url))


def test_the_model_has_exactly_the_tables_of_the_migrations(catalog: dict[str, Any]) -> None:
    assert set(schema.TABLES) == catalog["tables"] - NOT_MODELLED


def test_every_column_in_order_with_type_and_nullability(catalog: dict[str, Any]) -> None:
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for row in catalog["columns"]:
        if row["table_name"] in NOT_MODELLED:
            continue
        found.setdefault(row["table_name"], []).append(
            (row["column_name"], row["type"], row["is_nullable"] == "YES")
        )
    for name, table in schema.TABLES.items():
        declared = [(column.name, column.type, column.nullable) for column in table.columns]
        assert declared == found.get(name), name
    assert set(found) == set(schema.TABLES)


def test_every_default(catalog: dict[str, Any]) -> None:
    declared: dict[tuple[str, str], Any] = {}
    for name, table in schema.TABLES.items():
        for column in table.columns:
            if column.default is not schema.NO_DEFAULT:
                value = column.default
                declared[name, column.name] = list(value) if isinstance(value, tuple) else value
    database = {key: value for key, value in catalog["defaults"].items() if key[0] not in NOT_MODELLED}
    assert declared == database


def test_keys_and_history_twins(catalog: dict[str, Any]) -> None:
    primary: dict[str, tuple[str, ...]] = catalog["primary"]
    unique = set(catalog["unique"])
    for name, table in schema.TABLES.items():
        if table.key and table.key_is_primary:
            assert primary.get(name) == table.key, name
        else:
            assert name not in primary, name
        if table.key and not table.key_is_primary:
            assert (name, table.key) in unique, name
    assert {name for name in primary if name not in NOT_MODELLED} == {
        name for name, table in schema.TABLES.items() if table.key and table.key_is_primary
    }
    for table in schema.BASE_TABLES:
        if table.history:
            twin = schema.TABLES[table.name + "_history"]
            assert twin.columns == table.columns
            assert twin.key == ()
    history_tables = {name for name in catalog["tables"] if name.endswith("_history")} - NOT_MODELLED
    assert history_tables == {table.name + "_history" for table in schema.BASE_TABLES if table.history}


def test_lookup_and_routing() -> None:
    assert schema.table("entity") is schema.ENTITY
    assert schema.routed("entity", closed=True).name == "entity_history"
    assert schema.routed("entity", closed=False) is schema.ENTITY
    assert schema.routed("transaction", closed=True) is schema.TRANSACTION
    assert schema.TOKEN.column("name").cast_type == "character varying"
    assert schema.TRANSACTION.column("inner_transactions").cast_type == "bigint[]"
    with pytest.raises(schema.SchemaError, match="table nope does not exist"):
        schema.table("nope")
    with pytest.raises(schema.SchemaError, match="table entity has no column nope"):
        schema.ENTITY.column("nope")
    with pytest.raises(schema.SchemaError, match="has no history twin"):
        _ = schema.TRANSACTION.history_name


def test_every_declaration_is_collected_once() -> None:
    """Each table is declared in exactly one domain module of the package and listed once in BASE_TABLES."""
    declared: list[str] = []
    for module_info in pkgutil.iter_modules(schema.__path__):
        module = import_module(f"{schema.__name__}.{module_info.name}")
        found = vars(module).items()
        declared += [value.name for name, value in found if name.isupper() and isinstance(value, schema.Table)]
    assert sorted(declared) == sorted(table.name for table in schema.BASE_TABLES)
    assert len(set(declared)) == len(declared)
    assert all(getattr(schema, table.name.upper()) is table for table in schema.BASE_TABLES)
