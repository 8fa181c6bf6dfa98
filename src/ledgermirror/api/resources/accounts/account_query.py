"""The statements of the account routes: the entity columns an account object needs, the associated token
balances join, and the reads of ``/api/v1/accounts/{id}`` (its current state, its state as of a timestamp range
with the balance snapshot of then). Rendering is in ``account_render.py``, the OpenAPI schema in
``account_schema.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.window import TimestampWindow
from ledgermirror.api.resources.accounts.account_render import balance_object, current_balance, token_list
from ledgermirror.db.sql import Fragment, template
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.timestamps import month_start

TREASURY_NUM = 2

ENTITY_FIELDS = (
    "id, alias, auto_renew_period, balance, balance_timestamp, created_timestamp, decline_reward, "
    "delegation_address, deleted, ethereum_nonce, evm_address, expiration_timestamp, key, "
    "max_automatic_token_associations, memo, receiver_sig_required, staked_account_id, staked_node_id, "
    "stake_period_start"
)
"""The entity columns an account object needs (a static select list, unqualified)."""

ENTITY_COLUMNS = ", ".join("e." + name.strip() for name in ENTITY_FIELDS.split(","))
"""The same columns qualified with ``e.``."""

ACCOUNT_FILTER = "e.type in ('ACCOUNT', 'CONTRACT') and not (e.num = 2 and e.memo = " + (
    "'Mirror node created synthetic treasury account')"
)
"""Accounts and contracts, without the importer's synthetic treasury row (static SQL)."""

STAKE_COLUMNS = "es.pending_reward as stake_pending, es.end_stake_period as stake_end"
"""What :func:`pending_reward` needs from the staking row ``es``."""

_TOKENS_JOIN = Fragment("""left join lateral (
    select array_agg(t.token_id order by t.token_id {order}) as token_ids,
           array_agg(t.balance order by t.token_id {order}) as token_balances
    from (select ta.token_id, ta.balance from token_account ta
          where ta.account_id = e.id and ta.associated is true
          order by ta.token_id {order} limit {token_limit}) t
) tb on true""")


def tokens_join(order: Order) -> Fragment:
    """``tb.token_ids``/``tb.token_balances``, the associated token balances of ``e`` (the first
    ``{token_limit}``, a literal filled in per request, in ``order`` of token id). Called at import time only."""
    return _TOKENS_JOIN.fill(order=order)


_CURRENT = (
    Fragment(f"select {ENTITY_COLUMNS}, {STAKE_COLUMNS}, tb.token_ids, tb.token_balances\n")
    + Fragment("from entity e\nleft join entity_stake es on es.id = e.id\n")
    + tokens_join(Order.ASC)
    + Fragment("\nwhere e.id = {account} and ")
    + Fragment(ACCOUNT_FILTER)
)
"""Fill ``token_limit`` (the number of token balances); template parameter: ``account``."""

_OVERLAPS = "id = {account} and timestamp_range && int8range({lower}::bigint, {upper}::bigint, '[]')"
_VERSION_FIELDS = f"{ENTITY_FIELDS}, num, type, timestamp_range"
_STAKE_FIELDS = "pending_reward, end_stake_period, timestamp_range"
_HISTORICAL = f"""select {ENTITY_COLUMNS}, {STAKE_COLUMNS}
from (
    select {_VERSION_FIELDS} from entity where {_OVERLAPS}
    union all
    select {_VERSION_FIELDS} from entity_history where {_OVERLAPS}
) e
left join lateral (
    select s.pending_reward, s.end_stake_period from (
        select {_STAKE_FIELDS} from entity_stake where {_OVERLAPS}
        union all
        select {_STAKE_FIELDS} from entity_stake_history where {_OVERLAPS}
    ) s
    order by lower(s.timestamp_range) desc
    limit 1
) es on true
where {ACCOUNT_FILTER}
order by lower(e.timestamp_range) desc
limit 1"""
"""The latest version overlapping [``lower``, ``upper``] (null: open), with its staking row of then. ``ne``
values do not remove versions (the reference drops every version containing one, so ``ne:<any instant of its
life>`` hid the account)."""

_SNAPSHOT = """select consensus_timestamp from account_balance
where account_id = {treasury} and consensus_timestamp between {lower} and {upper}
  and consensus_timestamp <> all({excluded}::bigint[])
order by consensus_timestamp desc
limit 1"""
"""The newest balance snapshot in the range, found through the treasury account's row."""

_SNAPSHOT_BALANCES = Fragment("""select
    (select ab.balance from account_balance ab
     where ab.account_id = {account} and ab.consensus_timestamp between {month} and {snapshot}
     order by ab.consensus_timestamp desc
     limit 1) as balance,
    tb.token_ids, tb.token_balances
from (
    select array_agg(t.token_id order by t.token_id) as token_ids,
           array_agg(t.balance order by t.token_id) as token_balances
    from (select distinct on (token_id) token_id, balance from token_balance
          where account_id = {account} and consensus_timestamp between {month} and {snapshot}
          order by token_id, consensus_timestamp desc
          limit {token_limit}) t
) tb""")
"""The account's newest hbar and token balances between the snapshot's month start and the snapshot; fill
``token_limit``."""


async def current(ctx: AppContext, account: int) -> tuple[Any, dict[str, Any] | None]:
    statement = template(
        _CURRENT.fill(token_limit=ctx.settings.token_balance_limit_single_account), account=account
    )
    rows = await ctx.database.fetch(statement)
    if not rows:
        return None, None
    return rows[0], current_balance(rows[0])


def state_upper(window: TimestampWindow) -> int | None:
    """The upper bound of the account's state: the window's, or its smallest equality (the state as of then)."""
    return min(window.equals) if window.equals else window.upper


async def historical(ctx: AppContext, account: int, stamps: TimestampWindow) -> tuple[Any, dict[str, Any] | None]:
    """The account's state within the strict window ``stamps`` (``window.timestamp_window(strict=True)``)."""
    upper = state_upper(stamps)
    upper = None if upper is not None and upper >= INT64_MAX else upper
    versions, snapshot = await asyncio.gather(
        ctx.database.fetch(template(_HISTORICAL, account=account, lower=stamps.lower, upper=upper)),
        balance_snapshot(ctx, stamps),
    )
    if not versions:
        return None, None
    row = versions[0]
    if snapshot is None:
        return row, balance_object(row["balance"], row["balance_timestamp"], [])
    month = month_start(snapshot)
    limit = ctx.settings.token_balance_limit_single_account
    statement = template(
        _SNAPSHOT_BALANCES.fill(token_limit=limit), account=account, month=month, snapshot=snapshot
    )
    found = (await ctx.database.fetch(statement))[0]
    balance = found["balance"] if found["balance"] is not None else 0
    return row, balance_object(balance, snapshot, token_list(found["token_ids"], found["token_balances"]))


async def balance_snapshot(ctx: AppContext, stamps: TimestampWindow) -> int | None:
    """The newest snapshot between the range's bounds, no earlier than the first day of the month before the
    month of min(upper bound, now)."""
    now = ctx.clock.now_ns()
    as_of = state_upper(stamps)
    end = now if as_of is None else min(as_of, now)
    lower = max(stamps.lower or 0, month_start(end, months_back=1))
    upper = INT64_MAX if as_of is None else as_of
    if lower > upper:
        return None
    treasury = EntityId(ctx.settings.shard, ctx.settings.realm, TREASURY_NUM).encoded
    statement = template(_SNAPSHOT, treasury=treasury, lower=lower, upper=upper, excluded=list(stamps.excluded))
    found = await ctx.database.fetch(statement)
    return int(found[0]["consensus_timestamp"]) if found else None
