"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}``: one account, its balances and its latest transactions.

Checks run in the reference's order: query parameters, then the path (400 or 404), then the timestamp rules
(400, or ``404 Timestamp range is empty``), then the account itself (``404 Not found``).

Without ``timestamp`` the account is its current entity row with its live balance and associated tokens. With
``timestamp`` it is the latest entity version overlapping the range; its balance comes from the newest balance
snapshot in the range (found through the treasury account's row, at most a month before the range's end), or,
when there is none, from that entity version's own balance columns with no tokens.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Op, Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import Filter, InvalidValue, ParamSet, ParamSpec, ParseContext
from ledgermirror.api.resources import account_transactions, schemas
from ledgermirror.api.resources.account_ref import OPENAPI_PATH_PARAMETER, PATH_PARAMETER, resolve_account
from ledgermirror.api.resources.account_render import (
    ACCOUNT,
    ACCOUNT_FILTER,
    ENTITY_COLUMNS,
    ENTITY_FIELDS,
    STAKE_COLUMNS,
    balance_object,
    boolean,
    current_balance,
    render_account,
    token_list,
    tokens_join,
)
from ledgermirror.api.resources.account_transactions import TransactionWindow
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.int64 import INT64_MAX as _INT64_MAX
from ledgermirror.ledger.timestamps import InvalidTimestamp, format_ns, month_start, parse_timestamp
from ledgermirror.ledger.transaction_codes import TYPE_NUMBERS

TREASURY_NUM = 2


def transaction_type(text: str, ctx: ParseContext) -> str:
    name = text.upper()
    if name not in TYPE_NUMBERS:
        raise InvalidValue(text)
    return name


TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The account as of this consensus time (seconds[.nanoseconds]) and the transactions in that range; at most "
    "one lower and one upper bound, any number of ne, or eq values alone.",
    schema={"type": "string", "pattern": r"^((eq|gt|gte|lt|lte|ne):)?\d{1,10}(\.\d{1,9})?$"},
    example="lte:1700000000.000000000",
)
TRANSACTIONTYPE = ParamSpec[str](
    "transactiontype",
    transaction_type,
    "Only embedded transactions of this type (case-insensitive); repeat for several.",
    ops=EQ_ONLY,
    schema={"type": "string", "enum": sorted(TYPE_NUMBERS)},
    example="CRYPTOTRANSFER",
)
TRANSACTIONS = ParamSpec[bool](
    "transactions",
    boolean,
    "Embed the account's transactions (default true).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean", "default": True},
)

PARAMS = ParamSet([LIMIT, ORDER, TIMESTAMP, TRANSACTIONTYPE, TRANSACTIONS])


@dataclass(frozen=True, slots=True)
class Timestamps:
    """The ``timestamp`` filters, normalised: inclusive bounds (eq values give the upper bound of the state)."""

    given: bool = False
    lower: int | None = None
    upper: int | None = None
    excluded: tuple[int, ...] = ()
    equals: tuple[int, ...] = ()

    def transactions(self) -> TransactionWindow | None:
        """Which transactions qualify; None when none can (two different eq values)."""
        if len(set(self.equals)) > 1:
            return None
        if self.equals:
            return TransactionWindow(self.equals[0], self.equals[0])
        return TransactionWindow(self.lower, self.upper, self.excluded)


def timestamps(filters: list[Filter[int]]) -> Timestamps:
    """Apply the strict timestamp rules (400s) and the empty-range check (404)."""
    if not filters:
        return Timestamps()
    lowers = [item for item in filters if item.op in (Op.GT, Op.GTE)]
    uppers = [item for item in filters if item.op in (Op.LT, Op.LTE)]
    equals = tuple(item.value for item in filters if item.op is Op.EQ)
    excluded = tuple(item.value for item in filters if item.op is Op.NE)
    if len(lowers) > 1:
        raise BadRequest("Multiple gt or gte operators not permitted for timestamp param")
    if len(uppers) > 1:
        raise BadRequest("Multiple lt or lte operators not permitted for timestamp param")
    if equals and len(equals) != len(filters):
        raise BadRequest("Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param")
    lower = lowers[0].value + (lowers[0].op is Op.GT) if lowers else None
    upper = uppers[0].value - (uppers[0].op is Op.LT) if uppers else None
    if equals:
        upper = min(equals)
    if (lower is not None and lower > _INT64_MAX) or (lower is not None and upper is not None and upper < lower):
        raise NotFound("Timestamp range is empty")
    return Timestamps(True, lower, upper, excluded, equals)


_CURRENT = f"""select {ENTITY_COLUMNS}, {STAKE_COLUMNS}, tb.token_ids, tb.token_balances
from entity e
left join entity_stake es on es.id = e.id
{tokens_join(Order.ASC, "$2")}
where e.id = $1 and {ACCOUNT_FILTER}"""
"""$1 the account, $2 the number of token balances."""

_OVERLAPS = "id = $1 and timestamp_range && int8range($2::bigint, $3::bigint, '[]')"
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
"""The latest version overlapping [$2, $3] (null: open), with its staking row of then. ``ne`` values do not
remove versions (the reference drops every version containing one, so ``ne:<any instant of its life>`` hid
the account)."""

_SNAPSHOT = """select consensus_timestamp from account_balance
where account_id = $1 and consensus_timestamp between $2 and $3 and consensus_timestamp <> all($4::bigint[])
order by consensus_timestamp desc
limit 1"""
"""The newest balance snapshot in the range, found through the treasury account's row ($1)."""

_SNAPSHOT_BALANCES = """select
    (select ab.balance from account_balance ab
     where ab.account_id = $1 and ab.consensus_timestamp between $2 and $3
     order by ab.consensus_timestamp desc
     limit 1) as balance,
    tb.token_ids, tb.token_balances
from (
    select array_agg(t.token_id order by t.token_id) as token_ids,
           array_agg(t.balance order by t.token_id) as token_balances
    from (select distinct on (token_id) token_id, balance from token_balance
          where account_id = $1 and consensus_timestamp between $2 and $3
          order by token_id, consensus_timestamp desc
          limit $4) t
) tb"""
"""The account's newest hbar and token balances between the snapshot's month start ($2) and the snapshot ($3)."""


async def _current(ctx: AppContext, account: int) -> tuple[Any, dict[str, Any] | None]:
    rows = await ctx.database.fetch_raw(_CURRENT, account, ctx.settings.token_balance_limit_single_account)
    if not rows:
        return None, None
    return rows[0], current_balance(rows[0])


async def _historical(ctx: AppContext, account: int, stamps: Timestamps) -> tuple[Any, dict[str, Any] | None]:
    upper = None if stamps.upper is not None and stamps.upper >= _INT64_MAX else stamps.upper
    versions, snapshot = await asyncio.gather(
        ctx.database.fetch_raw(_HISTORICAL, account, stamps.lower, upper),
        _snapshot(ctx, stamps),
    )
    if not versions:
        return None, None
    row = versions[0]
    if snapshot is None:
        return row, balance_object(row["balance"], row["balance_timestamp"], [])
    month = month_start(snapshot)
    limit = ctx.settings.token_balance_limit_single_account
    found = (await ctx.database.fetch_raw(_SNAPSHOT_BALANCES, account, month, snapshot, limit))[0]
    balance = found["balance"] if found["balance"] is not None else 0
    return row, balance_object(balance, snapshot, token_list(found["token_ids"], found["token_balances"]))


async def _snapshot(ctx: AppContext, stamps: Timestamps) -> int | None:
    """The newest snapshot between the range's bounds, no earlier than the first day of the month before the
    month of min(upper bound, now)."""
    now = ctx.clock.now_ns()
    end = now if stamps.upper is None else min(stamps.upper, now)
    lower = max(stamps.lower or 0, month_start(end, months_back=1))
    upper = _INT64_MAX if stamps.upper is None else stamps.upper
    if lower > upper:
        return None
    treasury = EntityId(ctx.settings.shard, ctx.settings.realm, TREASURY_NUM).encoded
    found = await ctx.database.fetchval(_SNAPSHOT, treasury, lower, upper, list(stamps.excluded))
    return None if found is None else int(found)


async def _transactions(
    ctx: AppContext, account: int, window: TransactionWindow | None, names: list[str], *, limit: int, order: Order
) -> tuple[list[dict[str, Any]], int | None]:
    types: list[int] | None = None
    if names:
        types = sorted({number for name in names if (number := TYPE_NUMBERS[name]) is not None})
    if window is None or types == []:
        return [], None
    return await account_transactions.fetch_page(ctx, account, window, types, limit=limit, order=order)


async def _no_transactions() -> tuple[list[dict[str, Any]], int | None]:
    return [], None


async def get_account(request: Request, ctx: AppContext) -> Page:
    query = PARAMS.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    account = await resolve_account(request.path_params[PATH_PARAMETER], ctx)
    stamps = timestamps(query.filters(TIMESTAMP))
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.DESC)
    names = [item.value for item in query.filters(TRANSACTIONTYPE)]
    listed = (
        _transactions(ctx, account, stamps.transactions(), names, limit=limit, order=order)
        if query.last(TRANSACTIONS, True)
        else _no_transactions()
    )
    state = _historical(ctx, account, stamps) if stamps.given else _current(ctx, account)
    (row, balance), (transactions, after) = await asyncio.gather(state, listed)
    if row is None:
        raise NotFound()
    body = render_account(row, balance, delegation_address=ctx.settings.enable_delegation_address)
    link = None
    if after is not None:
        anchor = Anchor("timestamp", format_ns(after) or "", to_number=_timestamp_number)
        link = next_link(request.scope["path"], query.raw, [anchor], order)
    body["transactions"] = transactions
    body["links"] = {"next": link}
    return Page(body, link)


def _timestamp_number(text: str) -> int | None:
    try:
        return parse_timestamp(text)
    except InvalidTimestamp:
        return None


RESPONSE: dict[str, Any] = {
    "type": "object",
    "properties": {
        **ACCOUNT["properties"],
        "transactions": {
            "type": "array",
            "description": "The account's transactions, newest first by default (the reference's Transaction)",
            "items": {"type": "object"},
        },
        "links": schemas.LINKS,
    },
    "required": [*ACCOUNT["required"], "transactions", "links"],
}

ENDPOINT = Endpoint(
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}",
    handler=get_account,
    params=PARAMS,
    max_age=2,
    summary="Get an account",
    description="One account or contract by id, EVM address or alias: its state (now, or as of timestamp), its "
    "hbar and token balances, and a page of its transactions with links.next to the following page.",
    response_schema=RESPONSE,
    tag="accounts",
    path_params=(OPENAPI_PATH_PARAMETER,),
)
