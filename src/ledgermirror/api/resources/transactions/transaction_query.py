"""``GET /api/v1/transactions/{transactionIdOrHash}``, the query side.

By id: ``transaction (valid_start_ns, payer_account_id)`` within a consensus window after the valid start. By
hash: ``transaction_hash`` through its index on the first 32 bytes, in the one partition the reference's layout
puts the hash in (the full 48 bytes compared here), then the transactions at those timestamps. Inner
transactions of a batch: the (payer, valid start) pairs its ``inner_transactions`` lists, each by id. Every row
carries the list's columns, ``assessed_fees`` and ``inner_transactions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.resources.transactions.account_transactions_query import DETAILS_COLUMNS
from ledgermirror.db.sql import Column, Fragment, Op, Order, Select, template
from ledgermirror.ledger.int64 import INT64_MAX

ID_WINDOW_NS = 35 * 60 * 1_000_000_000
"""How long after its valid start a transaction may reach consensus (``maxTransactionConsensusTimestampRange``)."""
VALID_START_DRIFT_NS = 1_000_000_000
"""How long before its valid start a transaction may reach consensus (``maxValidStartTimestampDrift``)."""
HASH_ROWS = 25
HASH_PREFIX_BYTES = 32
HASH_PARTITIONS = 32
"""The reference LIST-partitions ``transaction_hash`` on ``mod(get_byte(hash, 0), 32)``. The lookup names the
partition with that very expression and its number written in the text (one statement per partition, all static),
so that PostgreSQL prunes the other 31 when it plans, generic plans of prepared statements included; a bound
number prunes only when the generic plan runs, after locking all 32 partitions and their indexes (45 against
about 25 µs of PostgreSQL CPU per lookup on ``medium``: docs/performance.md, "Two layouts"). On a plain table the
condition only filters the rows the index found."""

HEAD = (
    DETAILS_COLUMNS
    + """,
       (select json_agg(json_build_array(af.amount, af.collector_account_id, af.effective_payer_account_ids,
                                         af.token_id) order by af.collector_account_id, af.amount)
        from assessed_custom_fee af
        where af.consensus_timestamp = t.consensus_timestamp and af.payer_account_id = t.payer_account_id)
         as assessed_fees,
       t.inner_transactions
from transaction t"""
)
_HASH_TEXT = Fragment("""select consensus_timestamp, hash || coalesce(hash_suffix, ''::bytea) as hash,
    payer_account_id
from transaction_hash
where substring(hash from 1 for 32) = {prefix}
  and mod(get_byte(hash, 0), 32) = {partition}
order by consensus_timestamp
limit {limit}""")
HASH_SQL = tuple(_HASH_TEXT.fill(partition=number, limit=HASH_ROWS) for number in range(HASH_PARTITIONS))
"""The lookup by hash, by the partition of the hash's first byte."""
INNER_SQL = (
    HEAD
    + """
join unnest({payers}::bigint[], {starts}::bigint[]) as wanted(payer, valid_start)
  on t.payer_account_id = wanted.payer and t.valid_start_ns = wanted.valid_start
 and t.consensus_timestamp between wanted.valid_start - {drift} and wanted.valid_start + {window}
where ({nonce}::integer is null or t.nonce = {nonce})
  and ({scheduled}::boolean is null or t.scheduled = {scheduled})
order by t.consensus_timestamp"""
)

_TIMESTAMP = Column("t.consensus_timestamp")
_PAYER = Column("t.payer_account_id")
_VALID_START = Column("t.valid_start_ns")
_NONCE = Column("t.nonce")
_SCHEDULED = Column("t.scheduled")


@dataclass(frozen=True, slots=True)
class IdLookup:
    payer: int
    valid_start: int


@dataclass(frozen=True, slots=True)
class Narrowing:
    """The ``nonce`` and ``scheduled`` filters (None: not given)."""

    nonce: int | None = None
    scheduled: bool | None = None


def _narrow(select: Select, narrowing: Narrowing) -> Select:
    if narrowing.nonce is not None:
        select.compare(_NONCE, Op.EQ, narrowing.nonce)
    if narrowing.scheduled is not None:
        select.compare(_SCHEDULED, Op.EQ, narrowing.scheduled)
    return select.order_by([_TIMESTAMP], Order.ASC)


def id_statement(target: IdLookup, narrowing: Narrowing, *, window: int) -> Select:
    select = Select(HEAD)
    select.compare(_PAYER, Op.EQ, target.payer).compare(_VALID_START, Op.EQ, target.valid_start)
    select.compare(_TIMESTAMP, Op.GTE, target.valid_start - VALID_START_DRIFT_NS)
    select.compare(_TIMESTAMP, Op.LTE, min(target.valid_start + window, INT64_MAX))
    return _narrow(select, narrowing)


async def by_id(ctx: AppContext, target: IdLookup, narrowing: Narrowing, *, window: int) -> list[Any]:
    return list(await ctx.database.fetch(id_statement(target, narrowing, window=window).build()))


async def by_hash(ctx: AppContext, full_hash: bytes, narrowing: Narrowing) -> list[Any]:
    found = [
        row
        for row in await ctx.database.fetch(
            template(HASH_SQL[full_hash[0] % HASH_PARTITIONS], prefix=full_hash[:HASH_PREFIX_BYTES])
        )
        if bytes(row["hash"]) == full_hash
    ]
    if not found:
        return []
    stamps = [row["consensus_timestamp"] for row in found]
    select = Select(HEAD).any_of(_TIMESTAMP, stamps)
    select.compare(_TIMESTAMP, Op.GTE, min(stamps)).compare(_TIMESTAMP, Op.LTE, max(stamps))
    payer = found[0]["payer_account_id"]
    if payer is not None:
        select.compare(_PAYER, Op.EQ, payer)
    return list(await ctx.database.fetch(_narrow(select, narrowing).build()))


async def inner(ctx: AppContext, rows: list[Any], narrowing: Narrowing) -> list[Any]:
    """The inner transactions of the batches among ``rows`` (``inner_transactions``: payer, valid start, ...)."""
    flat = [value for row in rows for value in (row["inner_transactions"] or [])]
    if len(flat) < 2:
        return []
    payers, starts = flat[0::2], flat[1::2]
    statement = template(
        INNER_SQL,
        payers=payers[: len(starts)],
        starts=starts,
        drift=VALID_START_DRIFT_NS,
        window=ID_WINDOW_NS,
        nonce=narrowing.nonce,
        scheduled=narrowing.scheduled,
    )
    return list(await ctx.database.fetch(statement))
