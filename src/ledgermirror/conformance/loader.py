"""Loads the ``setup`` object of a reference JSON spec test into our PostgreSQL schema.

The keys are loaded in the reference harness's fixed order, each item merged over the reference defaults and
converted with its rules (see the sibling converter modules). Every value is sent as the text node-postgres
would send and cast to the column's type in SQL (``$n::text::<type>``), so PostgreSQL applies its own input
rules exactly as it does for the reference harness. Rows whose ``timestamp_range`` does not end in ``,)`` go
to ``<table>_history``.

``config``, ``features`` and ``sql`` are not data and are ignored here; the runner applies them.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any

import asyncpg

from ledgermirror.conformance import entities, network, tokens, transactions
from ledgermirror.conformance.ids import Context
from ledgermirror.conformance.rows import Row
from ledgermirror.conformance.values import SetupValueError, pg_text

Converter = Callable[[dict[str, Any], Context], list[Row]]

# The reference load order. ``None`` marks a key whose tables our schema does not have.
LOAD_ORDER: tuple[tuple[str, Converter | None], ...] = (
    ("accounts", entities.account_rows),
    ("addressbooks", network.address_book_rows),
    ("addressbookentries", network.address_book_entry_rows),
    ("addressbookserviceendpoints", network.address_book_service_endpoint_rows),
    ("assessedcustomfees", transactions.assessed_custom_fee_rows),
    ("balances", entities.balance_rows),
    ("cryptotransfers", transactions.crypto_transfer_rows),
    ("contracts", entities.contract_rows),
    ("contractactions", None),
    ("contractlogs", None),
    ("contractresults", None),
    ("contractStateChanges", None),
    ("cryptoAllowances", entities.crypto_allowance_rows),
    ("customfees", tokens.custom_fee_rows),
    ("entities", entities.entity_rows),
    ("entityStakes", entities.entity_stake_rows),
    ("entityTransactions", entities.entity_transaction_rows),
    ("ethereumtransactions", None),
    ("filedata", network.file_data_rows),
    ("networkstakes", network.network_stake_rows),
    ("nfts", tokens.nft_rows),
    ("nodes", network.node_rows),
    ("nodestakes", network.node_stake_rows),
    ("recordFiles", network.record_file_rows),
    ("schedules", None),
    ("stakingRewardTransfers", entities.staking_reward_transfer_rows),
    ("topicmessages", None),
    ("topicmessagelookups", None),
    ("tokens", tokens.token_rows),
    ("tokenaccounts", tokens.token_account_rows),
    ("tokenAllowances", tokens.token_allowance_rows),
    ("tokenBalance", tokens.token_balance_rows),
    ("transactions", transactions.transaction_rows),
    ("transactionhashes", transactions.transaction_hash_rows),
    ("transactionsignatures", None),
    ("contractStates", None),
)
NOT_DATA = frozenset({"config", "features", "sql"})
_KNOWN = frozenset(key for key, _ in LOAD_ORDER)

_COLUMN_TYPES_SQL = """
select c.relname, a.attname, format_type(a.atttypid, null)
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
"""

# Column types per connection (the schema does not change while fixtures load).
_column_types: weakref.WeakKeyDictionary[asyncpg.Connection, dict[str, dict[str, str]]] = (
    weakref.WeakKeyDictionary()
)

# Errors a converter or an insert can raise for a bad spec item.
_ITEM_ERRORS = (
    SetupValueError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    ArithmeticError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
)


class LoaderError(Exception):
    """A setup the loader cannot load; the message names the spec, the setup key and the row index."""


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


async def _types(conn: asyncpg.Connection) -> dict[str, dict[str, str]]:
    """Column types of every public table, cached per connection when it can be weakly referenced (a pool's
    connection proxy cannot, so it is asked once per load)."""
    try:
        cached = _column_types.get(conn)
    except TypeError:
        cached = None
    if cached is None:
        cached = {}
        for table, column, type_name in await conn.fetch(_COLUMN_TYPES_SQL):
            cached.setdefault(table, {})[column] = type_name
        with contextlib.suppress(TypeError):
            _column_types[conn] = cached
    return cached


async def _insert(conn: asyncpg.Connection, all_types: dict[str, dict[str, str]], row: Row) -> None:
    types = all_types.get(row.table)
    if types is None:
        raise SetupValueError(f"table {row.table} does not exist")
    columns = list(row.values)
    unknown = [column for column in columns if column not in types]
    if unknown:
        raise SetupValueError(f"table {row.table} has no column {', '.join(unknown)}")
    placeholders = ", ".join(f"${index}::text::{types[column]}" for index, column in enumerate(columns, 1))
    sql = f"insert into {_quote(row.table)} ({', '.join(map(_quote, columns))}) values ({placeholders})"
    await conn.execute(sql, *(pg_text(row.values[column]) for column in columns))


def _items(setup: dict[str, Any], key: str, spec: str) -> list[Any]:
    items = setup.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise LoaderError(f"{spec}: {key}: expected an array, not {type(items).__name__}")
    return items


def _check_keys(setup: dict[str, Any], spec: str) -> None:
    for key in setup:
        if key in NOT_DATA:
            continue
        if key not in _KNOWN:
            raise LoaderError(f"{spec}: {key}: unknown setup key")
    for key, converter in LOAD_ORDER:
        if converter is None and _items(setup, key, spec):
            raise LoaderError(f"{spec}: {key}: setup key not supported (its tables are not in our schema)")


async def load_setup(
    conn: asyncpg.Connection,
    setup: dict[str, Any],
    *,
    spec: str,
    shard: int = 0,
    realm: int = 0,
) -> None:
    """Insert the rows described by a spec's ``setup``, in one transaction.

    ``shard``/``realm`` are the configured ``hiero.mirror.common`` values: bare numbers in id columns are
    nums within them. The spec-wide shard/realm rewrite of ``0.0.N`` strings is the runner's job.
    """
    if not isinstance(setup, dict):
        raise LoaderError(f"{spec}: setup must be an object")
    _check_keys(setup, spec)
    ctx = Context(shard=shard, realm=realm)
    types = await _types(conn)
    async with conn.transaction():
        for key, converter in LOAD_ORDER:
            if converter is None:
                continue
            for index, item in enumerate(_items(setup, key, spec)):
                where = f"{spec}: {key}[{index}]"
                if not isinstance(item, dict):
                    raise LoaderError(f"{where}: expected an object, not {type(item).__name__}")
                try:
                    for row in converter(item, ctx):
                        await _insert(conn, types, row)
                except _ITEM_ERRORS as exc:
                    raise LoaderError(f"{where}: {type(exc).__name__}: {exc}") from exc
