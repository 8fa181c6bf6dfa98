"""The distribution layout for Citus (``ledgermirror db migrate --citus``), after the reference's v2 schema.

The reference's ``V2.0.1__distribution.sql`` distributes its large tables by the entity a row belongs to, all
colocated with ``entity`` (a row and its entity on the same worker), and keeps small descriptive tables as
reference tables (a copy on every worker). :data:`DISTRIBUTED` is that layout for the tables our schema has, in
our column names (``custom_fee.entity_id``: the reference renamed its ``token_id``); :data:`REFERENCE` the
reference tables. Citus requires every primary key and unique index of a distributed table to hold its
distribution column: :data:`WIDENED_KEYS` are our primary keys that do not, and :func:`apply` widens them with
it first (the reference's v2 keys are those wider ones).

Time partitioning of the large tables (the reference's ``V2.0.2__static_partitioning.sql`` and its partition
maintenance) is not applied here: our tables are created unpartitioned by ``migrations/``, and converting them
is a table rewrite that belongs to a migration of its own (docs/scaling.md, "What Citus needs").

Citus cannot be installed on the machines this was written on: the statements here were never run against a
Citus server. ``tests/db/test_citus.py`` checks the layout against the migrated catalog (every table and
column exists, every unique index holds the distribution column once widened) and that the API's hot routes
filter every distributed table they read by its distribution column.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

from ledgermirror.db.sql import quote_identifier

_log = logging.getLogger(__name__)


class CitusUnavailable(RuntimeError):
    """The server has no Citus extension to create."""


@dataclass(frozen=True, slots=True)
class Distributed:
    table: str
    column: str
    colocate_with: str = "entity"


DISTRIBUTED: tuple[Distributed, ...] = (
    Distributed("entity", "id", colocate_with="default"),  # the group every other table joins
    Distributed("transaction_hash", "hash", colocate_with="default"),
    Distributed("assessed_custom_fee", "payer_account_id"),
    Distributed("account_balance", "account_id"),
    Distributed("contract", "id"),
    Distributed("contract_action", "payer_account_id"),
    Distributed("contract_log", "contract_id"),
    Distributed("contract_result", "contract_id"),
    Distributed("contract_state", "contract_id"),
    Distributed("contract_state_change", "contract_id"),
    Distributed("crypto_allowance", "owner"),
    Distributed("crypto_allowance_history", "owner"),
    Distributed("crypto_transfer", "payer_account_id"),
    Distributed("custom_fee", "entity_id"),
    Distributed("entity_history", "id"),
    Distributed("entity_stake", "id"),
    Distributed("entity_stake_history", "id"),
    Distributed("entity_transaction", "entity_id"),
    Distributed("ethereum_transaction", "payer_account_id"),
    Distributed("file_data", "entity_id"),
    Distributed("nft", "token_id"),
    Distributed("nft_history", "token_id"),
    Distributed("nft_allowance", "owner"),
    Distributed("nft_allowance_history", "owner"),
    Distributed("prng", "payer_account_id"),
    Distributed("schedule", "schedule_id"),
    Distributed("staking_reward_transfer", "account_id"),
    Distributed("token", "token_id"),
    Distributed("token_history", "token_id"),
    Distributed("token_account", "account_id"),
    Distributed("token_account_history", "account_id"),
    Distributed("token_allowance", "owner"),
    Distributed("token_allowance_history", "owner"),
    Distributed("token_balance", "account_id"),
    Distributed("token_transfer", "payer_account_id"),
    Distributed("topic_message", "topic_id"),
    Distributed("topic_message_lookup", "topic_id"),
    Distributed("transaction", "payer_account_id"),
    Distributed("transaction_signature", "entity_id"),
)
"""Each distributed table, its distribution column and its colocation group (the reference's, in order)."""

REFERENCE: tuple[str, ...] = ("account_balance_file",)
"""Small tables copied to every worker."""

WIDENED_KEYS: dict[str, tuple[str, ...]] = {
    "contract_action": ("consensus_timestamp", "index", "payer_account_id"),
    "contract_log": ("consensus_timestamp", "index", "contract_id"),
    "contract_result": ("consensus_timestamp", "contract_id"),
    "ethereum_transaction": ("consensus_timestamp", "payer_account_id"),
    "file_data": ("consensus_timestamp", "entity_id"),
    "prng": ("consensus_timestamp", "payer_account_id"),
    "transaction": ("consensus_timestamp", "payer_account_id"),
}
"""Primary keys given their table's distribution column (Citus enforces uniqueness per shard only)."""

_AVAILABLE = "select exists (select 1 from pg_available_extensions where name = 'citus')"
_DISTRIBUTED_ALREADY = "select exists (select 1 from pg_dist_partition where logicalrelid = $1::regclass)"
_DISTRIBUTE = "select create_distributed_table($1::regclass, $2, colocate_with => $3)"
_REFERENCE = "select create_reference_table($1::regclass)"
_PRIMARY_KEY = "select conname from pg_constraint where conrelid = $1::regclass and contype = 'p'"


async def apply(conn: asyncpg.Connection) -> list[str]:
    """Create the extension and the layout on a migrated database (tables already distributed are left as
    they are); the tables distributed or made reference tables by this call. :class:`CitusUnavailable` when
    the server has no Citus."""
    if not await conn.fetchval(_AVAILABLE):
        raise CitusUnavailable(
            "the server has no Citus extension (pg_available_extensions has no 'citus'): install Citus on every "
            "node, or run `ledgermirror db migrate` without --citus"
        )
    await conn.execute("create extension if not exists citus")
    for table in WIDENED_KEYS:
        if not await conn.fetchval(_DISTRIBUTED_ALREADY, table):
            async with conn.transaction():
                await widen_key(conn, table)
    done = []
    for item in DISTRIBUTED:
        if not await conn.fetchval(_DISTRIBUTED_ALREADY, item.table):
            await conn.execute(_DISTRIBUTE, item.table, item.column, item.colocate_with)
            done.append(item.table)
    for table in REFERENCE:
        if not await conn.fetchval(_DISTRIBUTED_ALREADY, table):
            await conn.execute(_REFERENCE, table)
            done.append(table)
    _log.info("citus layout applied", extra={"tables": done})
    return done


async def widen_key(conn: asyncpg.Connection, table: str) -> None:
    """Give ``table``'s primary key its distribution column (:data:`WIDENED_KEYS`)."""
    name = await conn.fetchval(_PRIMARY_KEY, table)
    quoted = quote_identifier(table)
    if name is not None:
        await conn.execute(f"alter table {quoted} drop constraint {quote_identifier(name)}")
    columns = ", ".join(quote_identifier(column) for column in WIDENED_KEYS[table])
    await conn.execute(f"alter table {quoted} add primary key ({columns})")
