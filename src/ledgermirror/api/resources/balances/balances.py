"""``GET /api/v1/balances``: hbar and token balances of accounts, now or at a point in time.

Without ``timestamp`` the balances are the live ones (``entity.balance``, associated ``token_account`` rows) and
the body's ``timestamp`` is the newest ``balance_timestamp`` on the page. With ``timestamp`` they come from the
balance snapshots, as the reference computes them: the newest snapshot of the treasury account (0.0.2) in the
requested range (searched from the first day of the month before the range's end), then, per account, its
newest ``account_balance`` row (and per token its newest ``token_balance`` row) from the first day of that
snapshot's month up to the snapshot; every row reports the snapshot's timestamp.

``account.id`` takes entity ids with any operator, or one EVM address or alias with ``eq`` only (an address or
alias no account has matches nothing). Errors come in query-string order (the reference's older validator).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, NothingMatches, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext, ParsedQuery
from ledgermirror.api.querystring.window import inclusive_range
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.api.resources.accounts.account_query import TREASURY_NUM, tokens_join
from ledgermirror.api.resources.accounts.account_render import token_list
from ledgermirror.api.resources.accounts.accounts import balance_amount
from ledgermirror.db.sql import Column, Fragment, Select, template
from ledgermirror.ledger.entity_id import (
    EntityId,
    EvmForm,
    InvalidEntityId,
    encode_entity_id,
    format_encoded,
    long_zero_num,
    parse_entity_ref,
)
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.timestamps import format_ns, month_start

_EVM = re.compile(r"(0x)?([0-9a-fA-F]{40})", re.ASCII)
_ALIAS = re.compile(r"[A-Z2-7]+", re.ASCII)


def account_ref_value(text: str, ctx: ParseContext) -> EntityId | str:
    """An entity id, or the text of an EVM address or alias (resolved, and their operators checked, later)."""
    if _EVM.fullmatch(text):
        return text
    try:
        parsed = parse_entity_ref(text, shard=ctx.shard, realm=ctx.realm, evm=EvmForm.NONE)
    except InvalidEntityId:
        parsed = None
    if isinstance(parsed, EntityId):
        return parsed
    if _ALIAS.fullmatch(text):
        return text
    raise InvalidValue(text)


ACCOUNT_ID = ParamSpec[EntityId | str](
    "account.id",
    account_ref_value,
    "Account id with an optional operator (repeat for ranges; equalities form one list), or one EVM address "
    "or base32 alias (eq only).",
    schema={
        "type": "string",
        "anyOf": [
            {"pattern": f"^((eq|gt|gte|lt|lte|ne):)?({schemas.ENTITY_ID_VALUE})$"},
            {"pattern": f"^(eq:)?({schemas.EVM_ADDRESS_VALUE}|{account_ref.ALIAS_TEXT})$"},
        ],
    },
    example="gte:0.0.1000",
)
ACCOUNT_BALANCE = ParamSpec[int](
    "account.balance",
    balance_amount,
    "The hbar balance in tinybars, with an optional operator; repeat for ranges.",
    schema=schemas.INT64_QUERY,
    example="gt:1000",
)
ACCOUNT_PUBLICKEY = ParamSpec[str](
    "account.publickey",
    values.public_key,
    "The public key of the account's key (hex, optional 0x, raw or DER-encoded).",
    schema=schemas.PUBLIC_KEY_QUERY,
    example="3c3d546321ff6f63d701d2ec5c277095874e19f4a235bee1e6bb19258bf362be",
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "Balances as of this consensus timestamp (seconds[.nanoseconds]), from the balance snapshots; eq means "
    "lte. Repeat for a range.",
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1566560003.000000000",
)
PARAMS = ParamSet([ACCOUNT_ID, ACCOUNT_BALANCE, ACCOUNT_PUBLICKEY, LIMIT, ORDER, TIMESTAMP], url_order=True)

INVALID_ACCOUNT_ID = "Invalid parameter: account.id"
EQUALS_ONLY = "EVM address or alias only supports equals operator"
ONLY_ONE = "Only one EVM address or alias is allowed."

_ACCOUNT_TYPES = "e.type in ('ACCOUNT', 'CONTRACT')"

_CURRENT = {
    order: Fragment(
        "select e.id, e.balance, e.balance_timestamp as consensus_timestamp, tb.token_ids, tb.token_balances\n"
        "from entity e\n"
    )
    + tokens_join(order)
    for order in Order
}
"""Fill ``token_limit``, the number of token balances per account."""
_SNAPSHOT_TEXT = Fragment("""select ab.account_id as id, ab.balance, {snapshot}::bigint as consensus_timestamp,
       tb.token_ids, tb.token_balances
from (select distinct on (account_id) account_id, balance
      from account_balance
      where consensus_timestamp >= {window_start} and consensus_timestamp <= {snapshot}
      order by account_id {order}, consensus_timestamp desc) ab
left join lateral (
    select array_agg(t.token_id order by t.token_id {order}) as token_ids,
           array_agg(t.balance order by t.token_id {order}) as token_balances
    from (select distinct on (b.token_id) b.token_id, b.balance
          from token_balance b
          where b.account_id = ab.account_id
            and b.consensus_timestamp >= {window_start} and b.consensus_timestamp <= {snapshot}
          order by b.token_id {order}, b.consensus_timestamp desc
          limit {token_limit}) t
) tb on true""")
_SNAPSHOT = {order: _SNAPSHOT_TEXT.fill(order=order) for order in Order}
"""Fill ``token_limit``; template parameters ``snapshot``, ``window_start``."""
_TREASURY_SNAPSHOT = """select max(consensus_timestamp) as snapshot
from account_balance
where account_id = {treasury} and consensus_timestamp >= {low} and consensus_timestamp <= {high}
  and consensus_timestamp <> all({excluded}::bigint[])"""
_KEY_OWNERS = "select e.id from entity e"
_BY_ALIAS = "select id from entity"

_E_ID = Column("e.id")
_E_BALANCE = Column("e.balance")
_E_PUBLIC_KEY = Column("e.public_key")
_AB_ID = Column("ab.account_id")
_AB_BALANCE = Column("ab.balance")
_ALIAS_COLUMN = Column("alias")
_DELETED = Column("deleted")

BALANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account": schemas.ENTITY_ID,
        "balance": {"type": ["integer", "null"], "format": "int64"},
        "tokens": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"token_id": schemas.ENTITY_ID, "balance": {"type": "integer", "format": "int64"}},
                "required": ["token_id", "balance"],
            },
        },
    },
    "required": ["account", "balance", "tokens"],
}
HEADER_SCHEMA: dict[str, Any] = {
    "timestamp": {
        "type": ["string", "null"],
        "example": "1566560003.000000000",
        "description": "The newest balance timestamp on the page (the snapshot's with a timestamp filter)",
    }
}


@dataclass(frozen=True, slots=True)
class Scope:
    """The plan's inputs beyond the query: ``account.id`` filters resolved to encoded ids, the snapshot and the
    start of its window (snapshot mode), the accounts holding the public key (snapshot mode)."""

    ids: list[tuple[Op, int]]
    token_limit: int
    snapshot: int | None = None
    window_start: int = 0
    key_owners: list[int] | None = field(default=None)


def _classify(item: Any, ctx: ParseContext) -> tuple[Op, int | bytes | str, bool]:
    """An ``account.id`` filter as an encoded id, EVM address bytes or alias text, and whether it was written
    as an EVM address or alias (long-zero addresses included); 400 for anything else."""
    if isinstance(item.value, EntityId):
        return item.op, item.value.encoded, False
    text: str = item.value
    evm = _EVM.fullmatch(text)
    if evm is not None:
        num = long_zero_num(evm.group(2))
        value: int | bytes | str = (
            encode_entity_id(ctx.shard, ctx.realm, num) if num is not None else bytes.fromhex(evm.group(2))
        )
        return item.op, value, True
    return item.op, text, True


async def _by_alias(ctx: AppContext, text: str) -> int | None:
    try:
        alias = account_ref.parse_alias(text, shard=ctx.settings.shard, realm=ctx.settings.realm)
    except BadRequest:
        raise BadRequest(INVALID_ACCOUNT_ID) from None
    if alias is None:
        raise BadRequest(INVALID_ACCOUNT_ID)
    select = Select(_BY_ALIAS).compare(_ALIAS_COLUMN, Op.EQ, alias).is_not_true(_DELETED)
    rows = await ctx.database.fetch(select.order_by([Column("id")], Order.ASC).limit(1).build())
    return int(rows[0]["id"]) if rows else None


async def resolve_ids(query: ParsedQuery, ctx: AppContext) -> list[tuple[Op, int]]:
    """The ``account.id`` filters as encoded ids; an EVM address or alias no account has matches nothing."""
    classified = [_classify(item, ctx.parse_ctx) for item in query.filters(ACCOUNT_ID)]
    named = [op for op, _, is_named in classified if is_named]
    if any(op is not Op.EQ for op in named):
        raise BadRequest(INVALID_ACCOUNT_ID, detail=EQUALS_ONLY)
    if len(named) > 1:
        raise BadRequest(INVALID_ACCOUNT_ID, detail=ONLY_ONE)
    resolved: list[tuple[Op, int]] = []
    unknown = False
    for op, value, _ in classified:
        if isinstance(value, int):
            resolved.append((op, value))
            continue
        encoded = (
            (await evm_lookup.filter_ids(ctx, [value])).get(value)
            if isinstance(value, bytes)
            else await _by_alias(ctx, value)
        )
        if encoded is None:
            unknown = True
        else:
            resolved.append((op, encoded))
    if unknown and not any(op is Op.EQ for op, _ in resolved):
        raise NothingMatches
    return resolved


async def _snapshot(query: ParsedQuery, ctx: AppContext) -> tuple[int, int]:
    """The treasury snapshot the timestamp filters select and the start of its window; NothingMatches when
    there is none."""
    filters = query.filters(TIMESTAMP)
    lower, upper = inclusive_range(filters, eq_is_upper=True)
    low = 0 if lower is None else max(0, lower)
    high = INT64_MAX if upper is None else upper
    if low > high:
        raise NothingMatches
    low = max(low, month_start(min(high, ctx.clock.now_ns()), months_back=1))
    excluded = [item.value for item in filters if item.op is Op.NE]
    treasury = encode_entity_id(ctx.settings.shard, ctx.settings.realm, TREASURY_NUM)
    statement = template(_TREASURY_SNAPSHOT, treasury=treasury, low=low, high=high, excluded=excluded)
    rows = await ctx.database.fetch(statement)
    snapshot = rows[0]["snapshot"] if rows else None
    if snapshot is None:
        raise NothingMatches
    return snapshot, month_start(snapshot)


async def _key_owners(query: ParsedQuery, ctx: AppContext, limit: int) -> list[int]:
    select = Select(_KEY_OWNERS).where(_ACCOUNT_TYPES)
    for item in query.filters(ACCOUNT_PUBLICKEY):
        select.compare(_E_PUBLIC_KEY, item.op, item.value)
    rows = await ctx.database.fetch(select.order_by([_E_ID], Order.ASC).limit(limit).build())
    if not rows:
        raise NothingMatches
    return [int(row["id"]) for row in rows]


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Scope:
    ids = await resolve_ids(query, ctx)
    token_limit = ctx.settings.token_balance_limit_multiple_accounts
    if not query.has(TIMESTAMP):
        return Scope(ids, token_limit)
    snapshot, window_start = await _snapshot(query, ctx)
    owners = None
    if query.has(ACCOUNT_PUBLICKEY):
        owners = await _key_owners(query, ctx, query.last(LIMIT, ctx.settings.limit_default))
    return Scope(ids, token_limit, snapshot, window_start, owners)


def _ids(select: Select, column: Column, ids: Sequence[tuple[Op, int]]) -> None:
    equal = sorted({encoded for op, encoded in ids if op is Op.EQ})
    if equal:
        select.any_of(column, equal)
    for op, encoded in ids:
        if op is not Op.EQ:
            select.compare(column, op, encoded)


def plan(scope: Scope, query: ParsedQuery, limit: int, order: Order) -> Select:
    if scope.snapshot is None:
        select = Select(_CURRENT[order].fill(token_limit=scope.token_limit).text).where(_ACCOUNT_TYPES)
        id_column, balance_column = _E_ID, _E_BALANCE
        for key in query.filters(ACCOUNT_PUBLICKEY):
            select.compare(_E_PUBLIC_KEY, key.op, key.value)
    else:
        head = _SNAPSHOT[order].fill(token_limit=scope.token_limit).text
        select = Select(head, head_args={"snapshot": scope.snapshot, "window_start": scope.window_start})
        id_column, balance_column = _AB_ID, _AB_BALANCE
        if scope.key_owners is not None:
            select.any_of(id_column, scope.key_owners)
    _ids(select, id_column, scope.ids)
    for item in query.filters(ACCOUNT_BALANCE):
        select.compare(balance_column, item.op, item.value)
    return select.order_by([id_column], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "account": format_encoded(row["id"]),
        "balance": row["balance"],
        "tokens": token_list(row["token_ids"], row["token_balances"]),
    }


def header(context: object, rows: Sequence[Any]) -> dict[str, Any]:
    """``timestamp``: the newest balance timestamp of the page, null when it has none."""
    found = [row["consensus_timestamp"] for row in rows if row["consensus_timestamp"] is not None]
    return {"timestamp": format_ns(max(found)) if found else None}


def _anchors(scope: Scope, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(ACCOUNT_ID.name, format_encoded(row["id"]) or "", number=row["id"])]


LIST = ListSpec[Request, Scope](
    path="/api/v1/balances",
    items="balances",
    params=PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List account balances",
    description="Hbar and token balances of accounts and contracts, newest account first by default: the live "
    "balances, or with timestamp those of the balance snapshot in effect then. Pagination on account.id "
    "through links.next.",
    item_schema=BALANCE_SCHEMA,
    tag="balances",
    header=header,
    header_schema=HEADER_SCHEMA,
)
ENDPOINT = LIST.endpoint()
