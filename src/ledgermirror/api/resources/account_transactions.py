"""The transactions embedded in ``/api/v1/accounts/{id}``: the reference's transactions list for one account.

A transaction belongs to the account when the account paid for it (synthetic child records excepted), is its
entity, or sent or received hbar or tokens in it. Each of the four sources is read in consensus order up to the
page size through its own index, the union is cut to the page, and one more query loads the page's details.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson

from ledgermirror.api.context import AppContext
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.custom_fees import decode_fee_limits
from ledgermirror.ledger.entity_id import EntityId, format_encoded
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.ledger.transaction_codes import CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT, result_name, type_name

PRECEDING_TYPES = [CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT]
"""CRYPTOCREATEACCOUNT and CRYPTOUPDATEACCOUNT: child records the payer's list keeps even with a nonce."""
STAKING_REWARD_ACCOUNT_NUM = 800

# $1 account, $2 lowest and $3 highest consensus timestamp (inclusive), $4 excluded timestamps, $5 page size,
# $6 the preceding types, $7 (when filtering by type) the wanted types.
_SELECT_TEMPLATE = """select consensus_timestamp from (
    (select consensus_timestamp from transaction
     where payer_account_id = $1 and {range}
       and (nonce = 0 or parent_consensus_timestamp is not null or type = any($6::smallint[])){type}
     order by consensus_timestamp {order} limit $5)
    union
    (select consensus_timestamp from entity_transaction
     where entity_id = $1 and {range}{type}
     order by consensus_timestamp {order} limit $5)
    union
    (select distinct ct.consensus_timestamp from crypto_transfer ct
     where ct.entity_id = $1 and {ct_range}{fee_collector}{ct_type}
     order by ct.consensus_timestamp {order} limit $5)
    union
    (select distinct tt.consensus_timestamp from token_transfer tt
     where tt.account_id = $1 and {tt_range}{tt_type}
     order by tt.consensus_timestamp {order} limit $5)
) found
order by consensus_timestamp {order}
limit $5"""
_RANGE = "{p}consensus_timestamp between $2 and $3 and {p}consensus_timestamp <> all($4::bigint[])"
_TYPED = (
    "\n       and exists (select 1 from transaction t where t.consensus_timestamp = {p}consensus_timestamp"
    + (" and t.type = any($7::smallint[]))")
)
_PARTIAL_INDEX_LEAVES_OUT = 98
_FEE_COLLECTOR = " and ct.entity_id <> 98"
"""Lets every plan use the partial index on crypto_transfer, which leaves out encoded id 98 (the fee collection
account 0.0.98); left off for that account itself."""


def _select_sql(order: Order, typed: bool, fee_collector: bool) -> str:
    return _SELECT_TEMPLATE.format(
        order=order.value,
        range=_RANGE.format(p=""),
        ct_range=_RANGE.format(p="ct."),
        tt_range=_RANGE.format(p="tt."),
        type="\n       and type = any($7::smallint[])" if typed else "",
        ct_type=_TYPED.format(p="ct.") if typed else "",
        tt_type=_TYPED.format(p="tt.") if typed else "",
        fee_collector="" if fee_collector else _FEE_COLLECTOR,
    )


SELECT_SQL = {
    (order, typed, fee_collector): _select_sql(order, typed, fee_collector)
    for order in Order
    for typed in (False, True)
    for fee_collector in (False, True)
}
"""Static statements keyed by (order, filtered by type, the account is encoded id 98)."""

DETAILS_SQL = """select t.consensus_timestamp, t.payer_account_id, t.valid_start_ns, t.type, t.result, t.nonce,
       t.parent_consensus_timestamp, t.entity_id, t.node_account_id, t.valid_duration_seconds, t.max_fee,
       t.charged_tx_fee, t.memo, t.transaction_bytes, t.transaction_hash, t.nft_transfer, t.scheduled, t.batch_key,
       t.max_custom_fees, t.high_volume, t.high_volume_pricing_multiplier,
       (select json_agg(json_build_array(ct.entity_id, ct.amount, ct.is_approval) order by ct.entity_id, ct.amount)
        from crypto_transfer ct where ct.consensus_timestamp = t.consensus_timestamp) as transfers,
       (select json_agg(json_build_array(tt.token_id, tt.account_id, tt.amount, tt.is_approval)
                        order by tt.token_id, tt.account_id)
        from token_transfer tt where tt.consensus_timestamp = t.consensus_timestamp) as token_transfers,
       (select json_agg(json_build_array(sr.account_id, sr.amount) order by sr.account_id)
        from staking_reward_transfer sr where sr.consensus_timestamp = t.consensus_timestamp) as staking_rewards
from transaction t
where t.consensus_timestamp = any($1::bigint[])"""

FIRST_TIMESTAMP_SQL = "select consensus_timestamp from transaction order by consensus_timestamp limit 1"


@dataclass(frozen=True, slots=True)
class TransactionWindow:
    """Which consensus timestamps qualify: ``[lower, upper]`` (None: open), minus ``excluded``."""

    lower: int | None
    upper: int | None
    excluded: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Bound:
    """The window after ``bind_timestamp_range``; ``edge`` is where the next page starts when it was cut."""

    lower: int | None
    upper: int | None
    edge: int | None


def bind(window: TransactionWindow, order: Order, *, first: int, now: int, width: int) -> Bound:
    """Close an open window (first transaction, now) and cut it to ``width`` from the end the page starts at."""
    begin = window.lower if window.lower is not None else first
    end = window.upper if window.upper is not None else now
    if end - begin + 1 <= width:
        return Bound(begin, end, None)
    if order is Order.DESC:
        begin = end - width + 1
        return Bound(begin, end, begin)
    end = begin + width - 1
    return Bound(begin, end, end)


def select_arguments(
    account: int,
    *,
    lower: int | None,
    upper: int | None,
    excluded: tuple[int, ...],
    limit: int,
    types: list[int] | None,
) -> tuple[Any, ...]:
    arguments: tuple[Any, ...] = (
        account,
        INT64_MIN if lower is None else lower,
        INT64_MAX if upper is None else upper,
        list(excluded),
        limit,
        PRECEDING_TYPES,
    )
    return arguments if types is None else (*arguments, types)


async def fetch_page(
    ctx: AppContext,
    account: int,
    window: TransactionWindow,
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
        first = window.lower if window.lower is not None else await ctx.database.fetchval(FIRST_TIMESTAMP_SQL)
        if first is None:
            return [], None  # no transactions at all
        width = settings.max_transactions_timestamp_range_ns
        bound = bind(window, order, first=int(first), now=ctx.clock.now_ns(), width=width)
        lower, upper, edge = bound.lower, bound.upper, bound.edge
    probe = settings.pagination_probe
    sql = SELECT_SQL[(order, types is not None, account == _PARTIAL_INDEX_LEAVES_OUT)]
    arguments = select_arguments(
        account,
        lower=lower,
        upper=upper,
        excluded=window.excluded,
        limit=limit + 1 if probe else limit,
        types=types,
    )
    found = [row["consensus_timestamp"] for row in await ctx.database.fetch_raw(sql, *arguments)]
    more = len(found) > limit if probe else len(found) == limit
    found = found[:limit]
    if not found:
        return [], edge
    rows = sorted(
        await ctx.database.fetch_raw(DETAILS_SQL, found),
        key=lambda row: row["consensus_timestamp"],
        reverse=order is Order.DESC,
    )
    if any(row["max_custom_fees"] for row in rows):
        await protobuf.preload()  # decoding them needs the HAPI classes: import them off the event loop
    staking = EntityId(settings.shard, settings.realm, STAKING_REWARD_ACCOUNT_NUM).encoded
    return [render(row, staking) for row in rows], found[-1] if more else edge


def render(row: Any, staking_account: int) -> dict[str, Any]:
    """One transaction in the reference's list form (no ``assessed_custom_fees``)."""
    transfers = orjson.loads(row["transfers"]) if row["transfers"] else []
    token_transfers = orjson.loads(row["token_transfers"]) if row["token_transfers"] else []
    rewards = orjson.loads(row["staking_rewards"]) if row["staking_rewards"] else []
    if not any(entity == staking_account for entity, _, _ in transfers):
        rewards = []
    valid_start = row["valid_start_ns"]
    seconds, nanos = divmod(valid_start, 1_000_000_000)
    return {
        "batch_key": render_key(row["batch_key"]),
        "bytes": _base64(row["transaction_bytes"]),
        "charged_tx_fee": row["charged_tx_fee"],
        "consensus_timestamp": format_ns(row["consensus_timestamp"]),
        "entity_id": format_encoded(row["entity_id"]),
        "high_volume": bool(row["high_volume"]),
        "high_volume_pricing_multiplier": row["high_volume_pricing_multiplier"],
        "max_custom_fees": custom_fee_limits(row["max_custom_fees"]),
        "max_fee": _text(row["max_fee"]),
        "memo_base64": _base64(row["memo"]),
        "name": type_name(row["type"]),
        "nft_transfers": _nft_transfers(row["nft_transfer"]),
        "node": format_encoded(row["node_account_id"]),
        "nonce": row["nonce"],
        "parent_consensus_timestamp": format_ns(row["parent_consensus_timestamp"]),
        "result": result_name(row["result"]),
        "scheduled": row["scheduled"],
        "staking_reward_transfers": [
            {"account": format_encoded(account), "amount": amount} for account, amount in rewards
        ],
        "token_transfers": [
            {
                "token_id": format_encoded(token),
                "account": format_encoded(account),
                "amount": amount,
                "is_approval": bool(approval),
            }
            for token, account, amount, approval in token_transfers
        ],
        "transaction_hash": _base64(row["transaction_hash"]),
        "transaction_id": f"{EntityId.decode(row['payer_account_id'])}-{seconds}-{nanos:09d}",
        "transfers": [
            {"account": format_encoded(account), "amount": amount, "is_approval": bool(approval)}
            for account, amount, approval in transfers
        ],
        "valid_duration_seconds": _text(row["valid_duration_seconds"]),
        "valid_start_timestamp": format_ns(valid_start),
    }


def _base64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _text(value: int | None) -> str | None:
    return None if value is None else str(value)


def _nft_transfers(raw: str | None) -> list[dict[str, Any]]:
    if not raw:
        return []
    return [
        {
            "is_approval": bool(item.get("is_approval")),
            "receiver_account_id": format_encoded(item.get("receiver_account_id")),
            "sender_account_id": format_encoded(item.get("sender_account_id")),
            "serial_number": item.get("serial_number"),
            "token_id": format_encoded(item.get("token_id")),
        }
        for item in orjson.loads(raw)
    ]


def custom_fee_limits(limits: list[bytes] | None) -> list[dict[str, Any]]:
    """Each fee of each protobuf ``CustomFeeLimit`` as one entry (decoded by ``ledger/custom_fees.py``)."""
    return [
        {"account_id": fee.account_id, "amount": fee.amount, "denominating_token_id": fee.denominating_token_id}
        for fee in decode_fee_limits(limits)
    ]
