"""The distribution layout for Citus (``ledgermirror db migrate --citus``), after the reference's v2 schema.

The reference's ``V2.0.1__distribution.sql`` distributes its large tables by the entity a row belongs to, all
colocated with ``entity`` (a row and its entity on the same worker), and keeps small descriptive tables as
reference tables (a copy on every worker). :data:`DISTRIBUTED` is that layout for the tables our schema has, in
our column names (``custom_fee.entity_id``: the reference renamed its ``token_id``); :data:`REFERENCE` the
reference tables. Citus requires every primary key and unique index of a distributed table to hold its
distribution column: :data:`WIDENED_KEYS` are our primary keys that do not, and :func:`apply` widens them with
it first (the reference's v2 keys are those wider ones).

The large append-only tables are partitioned by time first (:data:`TIME_PARTITIONED`, the tables the
reference's v2 ``V2.0.0__create_tables.sql`` creates ``partition by range (consensus_timestamp)``, and
``record_file`` by ``consensus_end``): monthly range partitions in nanoseconds, named ``<table>_pYYYY_MM``, from
the month of the table's oldest row to :data:`MONTHS_AHEAD` months after the current one
(:func:`partition_by_time`). Our tables are created unpartitioned by ``migrations/``, so a table is converted
in one transaction (renamed, created again ``like`` it ``partition by range``, its rows copied, the old one
dropped): a rewrite, cheap on a new database, long on a loaded one. Partitioning is plain PostgreSQL, so it is
tested here on the embedded server; Citus distributes a partitioned table with its partitions. Running ``db
migrate --citus`` again adds the months missing up to :data:`MONTHS_AHEAD` ahead: it is the partition
maintenance (the reference's ``R__time_partition_maintenance.sql``), to run at least monthly (a row past the last
partition is refused). Left unpartitioned, as in the reference's later migrations: ``file_data`` (its
``V2.2.0__undo_file_data_time_partition.sql``) and ``transaction_hash`` (partitioned otherwise by its
``V2.16.0``).

Citus cannot be installed on the machines this was written on: the statements here were never run against a
Citus server. ``tests/db/test_citus.py`` checks the layout against the migrated catalog (every table and
column exists, every unique index holds the distribution column once widened), converts every time-partitioned
table on the embedded PostgreSQL (rolled back) and that the API's hot routes filter every distributed table they
read by its distribution column.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from ledgermirror.db.sql import quote_identifier
from ledgermirror.ledger.timestamps import month_start

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

TIME_PARTITIONED: dict[str, str] = {
    "account_balance": "consensus_timestamp",
    "assessed_custom_fee": "consensus_timestamp",
    "contract_action": "consensus_timestamp",
    "contract_log": "consensus_timestamp",
    "contract_result": "consensus_timestamp",
    "contract_state_change": "consensus_timestamp",
    "crypto_transfer": "consensus_timestamp",
    "entity_transaction": "consensus_timestamp",
    "ethereum_transaction": "consensus_timestamp",
    "network_freeze": "consensus_timestamp",
    "record_file": "consensus_end",
    "staking_reward_transfer": "consensus_timestamp",
    "token_balance": "consensus_timestamp",
    "token_transfer": "consensus_timestamp",
    "topic_message": "consensus_timestamp",
    "transaction": "consensus_timestamp",
}
"""The tables partitioned by time and their partition column (nanoseconds since the epoch)."""

MONTHS_AHEAD = 3
"""Monthly partitions are made this many months past the current one."""

_AVAILABLE = "select exists (select 1 from pg_available_extensions where name = 'citus')"
_DISTRIBUTED_ALREADY = "select exists (select 1 from pg_dist_partition where logicalrelid = $1::regclass)"
_DISTRIBUTE = "select create_distributed_table($1::regclass, $2, colocate_with => $3)"
_REFERENCE = "select create_reference_table($1::regclass)"
_PRIMARY_KEY = "select conname from pg_constraint where conrelid = $1::regclass and contype = 'p'"
_PARTITIONED_ALREADY = "select exists (select 1 from pg_partitioned_table where partrelid = $1::regclass)"
_PARTITIONS = "select count(*) from pg_inherits where inhparent = $1::regclass"
_NEWEST_BOUND = r"""select max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''(-?[0-9]+)''\)'))[1]
           ::bigint)
from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = $1::regclass"""
"""The upper bound of a range-partitioned table's last partition."""


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
    now = time.time_ns()
    for table in TIME_PARTITIONED:
        async with conn.transaction():
            await partition_by_time(conn, table, now_ns=now)
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


async def partition_by_time(conn: asyncpg.Connection, table: str, *, now_ns: int) -> list[str]:
    """Make ``table`` range-partitioned by month on its :data:`TIME_PARTITIONED` column, its rows kept, with
    partitions from its oldest row's month to :data:`MONTHS_AHEAD` months past ``now_ns``'s; on a table already
    partitioned, add the months missing at the end. The partitions made, by name. Run inside a transaction."""
    column = quote_identifier(TIME_PARTITIONED[table])
    quoted = quote_identifier(table)
    last = month_start(now_ns, months_back=-MONTHS_AHEAD)
    if await conn.fetchval(_PARTITIONED_ALREADY, table):
        if await conn.fetchval(_PARTITIONS, table) == 0:
            first = month_start(now_ns)
        else:
            newest = await conn.fetchval(_NEWEST_BOUND, table)
            first = month_start(newest)
            if first != newest:  # a bound that is not a month start: the next month start after it
                first = month_start(newest, months_back=-1)
        return await _add_months(conn, table, first, last)
    old = quote_identifier(f"{table}_unpartitioned")
    await conn.execute(f"alter table {quoted} rename to {old}")
    await conn.execute(f"create table {quoted} (like {old} including all) partition by range ({column})")
    oldest = await conn.fetchval(f"select min({column}) from {old}")
    made = await _add_months(conn, table, month_start(now_ns if oldest is None else min(oldest, now_ns)), last)
    await conn.execute(f"insert into {quoted} select * from {old}")
    await conn.execute(f"drop table {old}")
    return made


async def _add_months(conn: asyncpg.Connection, table: str, first: int, last: int) -> list[str]:
    """Monthly partitions of ``table`` from the month starting at ``first`` to the one starting at ``last``."""
    made = []
    start = first
    while start <= last:
        end = month_start(start, months_back=-1)
        moment = datetime.fromtimestamp(start // 1_000_000_000, tz=UTC)
        name = f"{table}_p{moment.year:04d}_{moment.month:02d}"
        await conn.execute(
            f"create table {quote_identifier(name)} partition of {quote_identifier(table)} "
            f"for values from ({int(start)}) to ({int(end)})"
        )
        made.append(name)
        start = end
    return made
