"""``GET /api/v1/tokens/{tokenId}/balances``: the balances of one token by account, highest account first by
default.

Without ``timestamp`` the balances are the live ``token_account`` rows of associated accounts; the body's
``timestamp`` is the newest ``balance_timestamp`` of the page. With ``timestamp`` (``eq`` reads as ``lte``,
``ne`` excludes a snapshot) they come from the newest balance snapshot in the range (found through the
treasury account's ``account_balance`` row, as ``/accounts/{id}`` does): each account's newest
``token_balance`` row between the first day of the snapshot's month and the snapshot, ``account.balance``
applied after picking it; the body's ``timestamp`` is the snapshot. No snapshot: an empty page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import TimestampWindow, inclusive_range
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts.account_query import balance_snapshot
from ledgermirror.api.resources.tokens import token_ref
from ledgermirror.db.sql import Column, Fragment, Select, template
from ledgermirror.ledger.entity_id import EntityId, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns, month_start

ACCOUNT_ID = ParamSpec[EntityId](
    "account.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The account id, with an optional operator (eq, ne, gt, gte, lt, lte); the key of the pagination.",
    schema=schemas.ENTITY_ID_QUERY,
    example="0.0.1001",
)
ACCOUNT_BALANCE = ParamSpec[int](
    "account.balance",
    values.integer_between(0),
    "The token balance (0 to 2^63-1), with an optional operator.",
    schema=schemas.INT64_QUERY,
    example="gte:100",
)
ACCOUNT_PUBLICKEY = ParamSpec[str](
    "account.publickey",
    values.public_key,
    "The account's public key (hex, optional 0x, raw or DER-encoded); equality only, the last value counts.",
    ops=EQ_ONLY,
    repeatable=False,
    schema=schemas.PUBLIC_KEY_QUERY,
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The balances as of the newest balance snapshot in this range (seconds[.nanoseconds]; eq means lte).",
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
)

PARAMS = ParamSet([ACCOUNT_ID, ACCOUNT_BALANCE, ACCOUNT_PUBLICKEY, LIMIT, ORDER, TIMESTAMP])

_CURRENT = """select ti.account_id, ti.balance, ti.balance_timestamp as timestamp
from token_account ti"""
_CURRENT_WITH_KEY = _CURRENT + "\njoin entity e on e.id = ti.account_id and e.type = 'ACCOUNT'"

_SNAPSHOT_INNER = Fragment("""select distinct on (tb.account_id) tb.account_id, tb.balance, tb.consensus_timestamp
    from token_balance tb{join}
    where tb.token_id = {token} and tb.consensus_timestamp between {month} and {snapshot}{key}
    order by tb.account_id, tb.consensus_timestamp desc""")
_SNAPSHOT = Fragment("select b.account_id, b.balance, b.consensus_timestamp as timestamp\nfrom ({inner}) b")
_SNAPSHOT_PLAIN = _SNAPSHOT.fill(inner=_SNAPSHOT_INNER.fill(join=Fragment(""), key=Fragment(""))).text
_SNAPSHOT_WITH_KEY = _SNAPSHOT.fill(
    inner=_SNAPSHOT_INNER.fill(
        join=Fragment("\n    join entity e on e.id = tb.account_id and e.type = 'ACCOUNT'"),
        key=Fragment(" and e.public_key = {public_key}"),
    )
).text
_DECIMALS = "select decimals from token where token_id = {token}"

_TOKEN = Column("ti.token_id")
_ASSOCIATED = Column("ti.associated")
_PUBLIC_KEY = Column("e.public_key")
_ACCOUNT = {False: Column("ti.account_id"), True: Column("b.account_id")}
_BALANCE = {False: Column("ti.balance"), True: Column("b.balance")}


@dataclass(frozen=True, slots=True)
class TokenBalances:
    token: int
    decimals: int | None
    snapshot: int | None
    """The snapshot's timestamp (historical balances), or None (current balances)."""


def plan(context: TokenBalances, query: ParsedQuery, limit: int, order: Order) -> Select:
    keys = query.filters(ACCOUNT_PUBLICKEY)
    key = keys[-1].value if keys else None
    historical = context.snapshot is not None
    if context.snapshot is not None:
        args: dict[str, Any] = {
            "token": context.token,
            "month": month_start(context.snapshot),
            "snapshot": context.snapshot,
        }
        if key is None:
            select = Select(_SNAPSHOT_PLAIN, args)
        else:
            select = Select(_SNAPSHOT_WITH_KEY, {**args, "public_key": key})
    else:
        select = Select(_CURRENT if key is None else _CURRENT_WITH_KEY)
        select.compare(_TOKEN, Op.EQ, context.token).is_true(_ASSOCIATED)
        if key is not None:
            select.compare(_PUBLIC_KEY, Op.EQ, key)
    for item in query.filters(ACCOUNT_ID):
        select.compare(_ACCOUNT[historical], item.op, item.value.encoded)
    for balance in query.filters(ACCOUNT_BALANCE):
        select.compare(_BALANCE[historical], balance.op, balance.value)
    return select.order_by([_ACCOUNT[historical]], order).limit(limit)


async def _snapshot(ctx: AppContext, query: ParsedQuery) -> int | None:
    stamps = query.filters(TIMESTAMP)
    lower, upper = inclusive_range(stamps, eq_is_upper=True)
    if lower is not None and upper is not None and lower > upper:
        raise NothingMatches
    excluded = tuple(item.value for item in stamps if item.op is Op.NE)
    found = await balance_snapshot(ctx, TimestampWindow(lower, upper, excluded))
    if found is None:
        raise NothingMatches
    return found


async def _prepare(token: int, query: ParsedQuery, ctx: AppContext) -> TokenBalances:
    snapshot = await _snapshot(ctx, query) if query.has(TIMESTAMP) else None
    rows = await ctx.database.fetch(template(_DECIMALS, token=token))
    decimals = int(rows[0]["decimals"]) if rows else None
    return TokenBalances(token, decimals, snapshot)


def _render(context: TokenBalances, row: Any) -> dict[str, Any]:
    return {"account": format_encoded(row["account_id"]), "balance": row["balance"], "decimals": context.decimals}


def _header(context: TokenBalances | None, rows: Sequence[Any]) -> dict[str, Any]:
    if context is None or not rows:
        return {"timestamp": None}
    if context.snapshot is not None:
        return {"timestamp": format_ns(context.snapshot)}
    stamps = [row["timestamp"] for row in rows if row["timestamp"] is not None]
    return {"timestamp": format_ns(max(stamps)) if stamps else None}


def _anchors(context: TokenBalances, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(ACCOUNT_ID.name, str(EntityId.decode(row["account_id"])), number=row["account_id"])]


BALANCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account": schemas.ENTITY_ID,
        "balance": {"type": "integer", "format": "int64"},
        "decimals": {"type": ["integer", "null"], "format": "int64"},
    },
    "required": ["account", "balance", "decimals"],
}

LIST = ListSpec[int, TokenBalances](
    path="/api/v1/tokens/{tokenId}/balances",
    items="balances",
    params=PARAMS,
    default_order=Order.DESC,
    locate=token_ref.path_token,
    prepare=_prepare,
    plan=plan,
    render_with=_render,
    anchors=_anchors,
    max_age=1,
    summary="List a token's balances",
    description="The token's balance of each associated account, now or as of the newest balance snapshot in a "
    "timestamp range, in descending account order by default, with pagination through links.next.",
    item_schema=BALANCE,
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER,),
    header=_header,
    header_schema={"timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"}},
)
ENDPOINT = LIST.endpoint()
