"""The transactions embedded in ``/api/v1/accounts/{id}``, the query side: the reference's transactions list for
one account.

A transaction belongs to the account when the account paid for it (synthetic child records excepted), is its
entity, or sent or received hbar or tokens in it. Each of the four sources is read in consensus order up to the
page size through its own index, the union is cut to the page, and one more query loads the page's details.
Rendering is in ``transaction_render.py``. The details statement (``DETAILS_COLUMNS``, ``DETAILS_SQL``) and
``first_timestamp`` are shared with ``/transactions``, ``/transactions/{id}`` and the contract result and log
lists.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import has_more, probe_limit
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.window import TimestampWindow, bind
from ledgermirror.api.resources.transactions.transaction_render import render
from ledgermirror.db.sql import Column, Fragment, Select, Statement, template
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN
from ledgermirror.ledger.transaction_codes import CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT

PRECEDING_TYPES = [CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT]
"""CRYPTOCREATEACCOUNT and CRYPTOUPDATEACCOUNT: child records the payer's list keeps even with a nonce."""
STAKING_REWARD_ACCOUNT_NUM = 800

# Template parameters: account, lowest and highest consensus timestamp (inclusive), excluded timestamps, the
# preceding types and (when filtering by type) the wanted types; the page size is a literal.
_SELECT = Fragment("""select consensus_timestamp from (
    (select consensus_timestamp from transaction
     where payer_account_id = {account} and {range}
       and (nonce = 0 or parent_consensus_timestamp is not null or type = any({preceding}::smallint[])){type}
     order by consensus_timestamp {order} limit {limit})
    union
    (select consensus_timestamp from entity_transaction
     where entity_id = {account} and {range}{type}
     order by consensus_timestamp {order} limit {limit})
    union
    (select distinct ct.consensus_timestamp from crypto_transfer ct
     where ct.entity_id = {account} and {ct_range}{fee_collector}{ct_type}
     order by ct.consensus_timestamp {order} limit {limit})
    union
    (select distinct tt.consensus_timestamp from token_transfer tt
     where tt.account_id = {account} and {tt_range}{tt_type}
     order by tt.consensus_timestamp {order} limit {limit})
) found
order by consensus_timestamp {order}
limit {limit}""")
_RANGE = Fragment(
    "{p}consensus_timestamp between {lower} and {upper} and {p}consensus_timestamp <> all({excluded}::bigint[])"
)
_TYPED = Fragment(
    "\n       and exists (select 1 from transaction t where t.consensus_timestamp = {p}consensus_timestamp"
    " and t.type = any({types}::smallint[]))"
)
_TYPE = Fragment("\n       and type = any({types}::smallint[])")
_NOTHING = Fragment("")
_PARTIAL_INDEX_LEAVES_OUT = 98
_FEE_COLLECTOR = Fragment(" and ct.entity_id <> {fee_collector}").fill(fee_collector=_PARTIAL_INDEX_LEAVES_OUT)
"""Lets every plan use the partial index on crypto_transfer, which leaves out encoded id 98 (the fee collection
account 0.0.98); left off for that account itself."""


def _select_sql(order: Order, typed: bool, fee_collector: bool) -> Fragment:
    ct, tt = Fragment("ct."), Fragment("tt.")
    return _SELECT.fill(
        order=order,
        range=_RANGE.fill(p=_NOTHING),
        ct_range=_RANGE.fill(p=ct),
        tt_range=_RANGE.fill(p=tt),
        type=_TYPE if typed else _NOTHING,
        ct_type=_TYPED.fill(p=ct) if typed else _NOTHING,
        tt_type=_TYPED.fill(p=tt) if typed else _NOTHING,
        fee_collector=_NOTHING if fee_collector else _FEE_COLLECTOR,
    )


SELECT_SQL = {
    (order, typed, fee_collector): _select_sql(order, typed, fee_collector)
    for order in Order
    for typed in (False, True)
    for fee_collector in (False, True)
}
"""Static statements keyed by (order, filtered by type, the account is encoded id 98); ``{limit}`` is left for
the page size."""

DETAILS_COLUMNS = """select t.consensus_timestamp, t.payer_account_id, t.valid_start_ns, t.type, t.result, t.nonce,
       t.parent_consensus_timestamp, t.entity_id, t.node_account_id, t.valid_duration_seconds, t.max_fee,
       t.charged_tx_fee, t.memo, t.transaction_bytes, t.transaction_hash, t.nft_transfer, t.scheduled, t.batch_key,
       t.max_custom_fees, t.high_volume, t.high_volume_pricing_multiplier,
       (select json_agg(json_build_array(ct.entity_id, ct.amount, ct.is_approval) order by ct.entity_id, ct.amount)
        from crypto_transfer ct where ct.consensus_timestamp = t.consensus_timestamp) as transfers,
       (select json_agg(json_build_array(tt.token_id, tt.account_id, tt.amount, tt.is_approval)
                        order by tt.token_id, tt.account_id)
        from token_transfer tt where tt.consensus_timestamp = t.consensus_timestamp) as token_transfers,
       (select json_agg(json_build_array(sr.account_id, sr.amount) order by sr.account_id)
        from staking_reward_transfer sr where sr.consensus_timestamp = t.consensus_timestamp) as staking_rewards"""
"""The columns ``render`` reads, from ``transaction t`` (also ``/transactions`` and ``/transactions/{id}``)."""
DETAILS_SQL = DETAILS_COLUMNS + "\nfrom transaction t\nwhere t.consensus_timestamp = any({timestamps}::bigint[])"

FIRST_TIMESTAMP = "select consensus_timestamp from transaction"
_CONSENSUS_TIMESTAMP = Column("consensus_timestamp")


def select_statement(
    account: int,
    *,
    order: Order,
    lower: int | None,
    upper: int | None,
    excluded: tuple[int, ...],
    limit: int,
    types: list[int] | None,
) -> Statement:
    text = SELECT_SQL[(order, types is not None, account == _PARTIAL_INDEX_LEAVES_OUT)].fill(limit=limit)
    arguments: dict[str, Any] = {
        "account": account,
        "lower": INT64_MIN if lower is None else lower,
        "upper": INT64_MAX if upper is None else upper,
        "excluded": list(excluded),
        "preceding": PRECEDING_TYPES,
    }
    if types is not None:
        arguments["types"] = types
    return template(text, **arguments)


def first_timestamp() -> Statement:
    return Select(FIRST_TIMESTAMP).order_by([_CONSENSUS_TIMESTAMP], Order.ASC).limit(1).build()


async def fetch_page(
    ctx: AppContext,
    account: int,
    window: TimestampWindow,
    types: list[int] | None,
    *,
    limit: int,
    order: Order,
) -> tuple[list[dict[str, Any]], int | None]:
    """One page of the account's transactions and the consensus timestamp the next page starts after (None:
    no next page). ``types`` None means any type."""
    settings = ctx.settings
    lower, upper, edge = window.lower, window.upper, None
    if settings.bind_timestamp_range:
        first = window.lower
        if first is None:
            found_first = await ctx.database.fetch(first_timestamp())
            first = found_first[0]["consensus_timestamp"] if found_first else None
        if first is None:
            return [], None  # no transactions at all
        width = settings.max_transactions_timestamp_range_ns
        bound = bind(window, order, first=int(first), now=ctx.clock.now_ns(), width=width)
        lower, upper, edge = bound.lower, bound.upper, bound.edge
    probe = settings.pagination_probe
    statement = select_statement(
        account,
        order=order,
        lower=lower,
        upper=upper,
        excluded=window.excluded,
        limit=probe_limit(limit, probe=probe),
        types=types,
    )
    found = [row["consensus_timestamp"] for row in await ctx.database.fetch(statement)]
    more = has_more(len(found), limit, probe=probe)
    found = found[:limit]
    if not found:
        return [], edge
    rows = sorted(
        await ctx.database.fetch(template(DETAILS_SQL, timestamps=found)),
        key=lambda row: row["consensus_timestamp"],
        reverse=order is Order.DESC,
    )
    if any(row["max_custom_fees"] for row in rows):
        await protobuf.preload()  # decoding them needs the HAPI classes: import them off the event loop
    staking = EntityId(settings.shard, settings.realm, STAKING_REWARD_ACCOUNT_NUM).encoded
    return [render(row, staking) for row in rows], found[-1] if more else edge
