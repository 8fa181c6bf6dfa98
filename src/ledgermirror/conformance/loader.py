"""Loads the ``setup`` object of a reference JSON spec test into our PostgreSQL schema.

The keys are loaded in the reference harness's fixed order, each item merged over the reference defaults and
converted with its rules (see the sibling converter modules). Every value is rendered as the text
node-postgres would send, and the writer (:func:`ledgermirror.db.write.insert_text`) casts it to the column's
type from the schema model, so PostgreSQL applies its own input rules exactly as it does for the reference
harness. Rows whose ``timestamp_range`` does not end in ``,)`` go to the table's ``_history`` twin (the
model's routing, see :mod:`.rows`).

``config``, ``features`` and ``sql`` are not data and are ignored here; the runner applies them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import asyncpg

from ledgermirror.conformance import contracts, entities, network, tokens, topics_schedules, transactions
from ledgermirror.conformance.ids import Context
from ledgermirror.conformance.rows import Row
from ledgermirror.conformance.values import SetupValueError, pg_text
from ledgermirror.db import write
from ledgermirror.db.sql import Select

Converter = Callable[[dict[str, Any], Context], list[Row]]

# The reference load order (every key's tables are in our schema); ``nftAllowances`` is ours.
LOAD_ORDER: tuple[tuple[str, Converter], ...] = (
    ("accounts", entities.account_rows),
    ("addressbooks", network.address_book_rows),
    ("addressbookentries", network.address_book_entry_rows),
    ("addressbookserviceendpoints", network.address_book_service_endpoint_rows),
    ("assessedcustomfees", transactions.assessed_custom_fee_rows),
    ("balances", entities.balance_rows),
    ("cryptotransfers", transactions.crypto_transfer_rows),
    ("contracts", entities.contract_rows),
    ("contractactions", contracts.action_rows),
    ("contractlogs", contracts.log_rows),
    ("contractresults", contracts.result_rows),
    ("contractStateChanges", contracts.state_change_rows),
    ("cryptoAllowances", entities.crypto_allowance_rows),
    ("customfees", tokens.custom_fee_rows),
    ("entities", entities.entity_rows),
    ("entityStakes", entities.entity_stake_rows),
    ("entityTransactions", entities.entity_transaction_rows),
    ("ethereumtransactions", contracts.ethereum_transaction_rows),
    ("filedata", network.file_data_rows),
    ("networkstakes", network.network_stake_rows),
    ("nfts", tokens.nft_rows),
    ("nftAllowances", tokens.nft_allowance_rows),
    ("nodes", network.node_rows),
    ("nodestakes", network.node_stake_rows),
    ("recordFiles", network.record_file_rows),
    ("schedules", topics_schedules.schedule_rows),
    ("stakingRewardTransfers", entities.staking_reward_transfer_rows),
    ("topicmessages", topics_schedules.topic_message_rows),
    ("topicmessagelookups", topics_schedules.topic_message_lookup_rows),
    ("tokens", tokens.token_rows),
    ("tokenaccounts", tokens.token_account_rows),
    ("tokenAllowances", tokens.token_allowance_rows),
    ("tokenBalance", tokens.token_balance_rows),
    ("transactions", transactions.transaction_rows),
    ("transactionhashes", transactions.transaction_hash_rows),
    ("transactionsignatures", topics_schedules.transaction_signature_rows),
    ("contractStates", contracts.state_rows),
)
DERIVED_AFTER: dict[str, Callable[[dict[str, Any], Context], list[Row]]] = {
    "contractStateChanges": contracts.contract_transaction_rows,
}
"""Rows the reference harness derives from the whole setup, written right after the given key's rows."""
NOT_DATA = frozenset({"config", "features", "sql"})
_KNOWN = frozenset(key for key, _ in LOAD_ORDER)

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


async def _insert(conn: asyncpg.Connection, row: Row) -> None:
    await write.insert_text(conn, row.table, {column: pg_text(value) for column, value in row.values.items()})


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


async def load_setup(
    conn: asyncpg.Connection,
    setup: dict[str, Any],
    *,
    spec: str,
    shard: int = 0,
    realm: int = 0,
    topic_message_lookup: bool = False,
) -> None:
    """Insert the rows described by a spec's ``setup``, in one transaction.

    With ``topic_message_lookup`` (the spec's ``query.topicMessageLookup``) and no lookup rows given, the
    lookup rows are generated from the topic messages, as the reference harness does.

    ``shard``/``realm`` are the configured ``hiero.mirror.common`` values: bare numbers in id columns are
    nums within them. The spec-wide shard/realm rewrite of ``0.0.N`` strings is the runner's job.
    """
    if not isinstance(setup, dict):
        raise LoaderError(f"{spec}: setup must be an object")
    _check_keys(setup, spec)
    ctx = Context(shard=shard, realm=realm)
    async with conn.transaction():
        for key, converter in LOAD_ORDER:
            for index, item in enumerate(_items(setup, key, spec)):
                where = f"{spec}: {key}[{index}]"
                if not isinstance(item, dict):
                    raise LoaderError(f"{where}: expected an object, not {type(item).__name__}")
                try:
                    for row in converter(item, ctx):
                        await _insert(conn, row)
                except _ITEM_ERRORS as exc:
                    raise LoaderError(f"{where}: {type(exc).__name__}: {exc}") from exc
            derive = DERIVED_AFTER.get(key)
            if derive is not None:
                try:
                    for row in derive(setup, ctx):
                        await _insert(conn, row)
                except _ITEM_ERRORS as exc:
                    raise LoaderError(f"{spec}: derived from {key}: {type(exc).__name__}: {exc}") from exc
        if topic_message_lookup and not _items(setup, "topicmessagelookups", spec):
            await _generate_lookups(conn)


_MESSAGES = "select topic_id, sequence_number, consensus_timestamp from topic_message"


async def _generate_lookups(conn: asyncpg.Connection) -> None:
    statement = Select(_MESSAGES).build()
    found = await conn.fetch(statement.text, *statement.args)
    messages = [(row["topic_id"], row["sequence_number"], row["consensus_timestamp"]) for row in found]
    for row in topics_schedules.generated_lookup_rows(messages):
        await _insert(conn, row)
