"""The migration runner, the schema it builds, and the read-only role, on a real PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from ledgermirror.db.migrate import Migration, MigrationError, bundled_migrations, migrate
from ledgermirror.db.sql import quote_identifier
from ledgermirror.runtime import Prepared


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def _with(url: str, action: Any) -> Any:
    conn = await asyncpg.connect(url)
    try:
        return await action(conn)
    finally:
        await conn.close()


def test_bundled_migrations_are_numbered_in_order() -> None:
    versions = [migration.version for migration in bundled_migrations()]
    assert versions == sorted(versions)
    assert versions[0] == 1


def test_migrate_again_applies_nothing(database: Prepared) -> None:
    async def action(conn: asyncpg.Connection) -> list[Migration]:
        return await migrate(conn)

    assert run(_with(database.owner_url, action)) == []


@pytest.mark.parametrize(
    ("table", "columns"),
    [
        ("token", ["token_id", "created_timestamp", "decimals", "freeze_default", "freeze_key", "initial_supply"]),
        ("entity", ["auto_renew_account_id", "auto_renew_period", "created_timestamp", "deleted"]),
        ("entity_history", ["auto_renew_account_id", "auto_renew_period", "created_timestamp", "deleted"]),
        ("token_account", ["account_id", "associated", "automatic_association", "created_timestamp"]),
    ],
)
def test_reference_column_order(database: Prepared, table: str, columns: list[str]) -> None:
    async def action(conn: asyncpg.Connection) -> list[str]:
        rows = await conn.fetch(
            "select column_name from information_schema.columns where table_name = $1 order by ordinal_position",
            table,
        )
        return [row["column_name"] for row in rows]

    assert run(_with(database.owner_url, action))[: len(columns)] == columns


def test_every_table_the_issue_names_exists(database: Prepared) -> None:
    expected = {
        "entity", "token", "token_account", "crypto_allowance", "token_allowance", "nft_allowance", "nft",
        "token_airdrop", "staking_reward_transfer", "entity_stake", "account_balance", "token_balance",
        "record_file", "address_book", "address_book_entry", "address_book_service_endpoint", "node",
        "node_stake", "network_stake", "file_data", "transaction", "crypto_transfer", "token_transfer",
        "custom_fee", "contract", "transaction_hash", "entity_transaction", "entity_history", "token_history",
    }  # fmt: skip

    async def action(conn: asyncpg.Connection) -> set[str]:
        rows = await conn.fetch("select tablename from pg_tables where schemaname = 'public'")
        return {row["tablename"] for row in rows}

    assert expected <= run(_with(database.owner_url, action))


def test_changed_migration_is_refused(database: Prepared) -> None:
    first = bundled_migrations()[0]
    edited = Migration(first.version, first.name, first.sql + "\n-- edited\n")

    async def action(conn: asyncpg.Connection) -> None:
        await migrate(conn, [edited])

    with pytest.raises(MigrationError, match="changed after it was applied"):
        run(_with(database.owner_url, action))


def test_new_migration_is_applied_once(database: Prepared) -> None:
    extra = Migration(9999, "test_extra", "create table if not exists test_extra_table (id int)")

    async def action(conn: asyncpg.Connection) -> tuple[list[Migration], list[Migration]]:
        try:
            return await migrate(conn, [extra]), await migrate(conn, [extra])
        finally:
            await conn.execute("drop table if exists test_extra_table")
            await conn.execute("delete from ledgermirror_schema_history where version = 9999")

    applied_first, applied_again = run(_with(database.owner_url, action))
    assert [m.version for m in applied_first] == [9999]
    assert applied_again == []


def test_api_role_reads_but_cannot_write(database: Prepared) -> None:
    assert database.api_url != database.owner_url

    async def action(conn: asyncpg.Connection) -> Any:
        assert await conn.fetchval("select current_user") == "mirror_api"
        assert await conn.fetchval("select count(*) from token") >= 0
        with pytest.raises(asyncpg.PostgresError):
            await conn.execute("insert into contract (id) values (1)")
        with pytest.raises(asyncpg.PostgresError):
            await conn.execute("create table sneaky (id int)")

    run(_with(database.api_url, action))


@pytest.mark.parametrize("name", ["mirror_api", "a", "_x9"])
def test_quote_identifier_accepts_plain_names(name: str) -> None:
    assert quote_identifier(name) == f'"{name}"'


@pytest.mark.parametrize("name", ["", "Mirror", 'x"; drop table token; --', "1abc", "a-b", "a" * 64])
def test_quote_identifier_rejects_anything_else(name: str) -> None:
    with pytest.raises(ValueError, match="not a plain identifier"):
        quote_identifier(name)


_INDEX_METHOD = """
select method.amname
from pg_class as index_class join pg_am as method on method.oid = index_class.relam
where index_class.oid = to_regclass('transaction_hash__hash')
"""


def _migration(version: int) -> Migration:
    return next(migration for migration in bundled_migrations() if migration.version == version)


def test_transaction_hash_is_looked_up_through_a_hash_index(database: Prepared) -> None:
    # As the reference's V1.98.0 indexes it; a btree of the same name (migration 0003's) is replaced, and
    # running the migration again (over a database where it is already a hash index) keeps it.
    replace = _migration(51)

    async def action(conn: asyncpg.Connection) -> list[str]:
        methods = [await conn.fetchval(_INDEX_METHOD)]
        transaction = conn.transaction()
        await transaction.start()
        try:
            await conn.execute("drop index transaction_hash__hash")
            await conn.execute(
                "create index transaction_hash__hash on transaction_hash (substring(hash from 1 for 32))"
            )
            methods.append(await conn.fetchval(_INDEX_METHOD))
            await conn.execute(replace.sql)
            methods.append(await conn.fetchval(_INDEX_METHOD))
            await conn.execute(replace.sql)
            methods.append(await conn.fetchval(_INDEX_METHOD))
        finally:
            await transaction.rollback()
        methods.append(await conn.fetchval(_INDEX_METHOD))
        return methods

    assert run(_with(database.owner_url, action)) == ["hash", "btree", "hash", "hash", "hash"]
