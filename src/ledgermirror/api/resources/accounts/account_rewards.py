"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/rewards``: an account's staking reward payouts.

As in the reference, the account is resolved and must exist (any entity, deleted or not) before the query is
validated: path errors and 404s come first. Payouts are ordered by consensus timestamp, newest first by default.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.timestamps import format_ns

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The payout's consensus timestamp (seconds[.nanoseconds]) with an optional operator (eq, gt, gte, lt, lte; "
    "not ne). Repeat for ranges; equalities are combined as one list.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1234567890.000000001",
    doc_ops=RANGE_OPS,
)

PARAMS = ParamSet([LIMIT, ORDER, TIMESTAMP])

NE_NOT_SUPPORTED = "Not equals (ne) operator is not supported for timestamp"

_SELECT = """select account_id, amount, consensus_timestamp
from staking_reward_transfer"""
_EXISTS = "select id from entity"
_ID = Column("id")

_ACCOUNT = Column("account_id")
_TIMESTAMP = Column("consensus_timestamp")

REWARD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account_id": schemas.ENTITY_ID,
        "amount": {"type": "integer", "format": "int64", "description": "Reward paid, in tinybars"},
        "timestamp": {"type": "string", "example": "1234567890.000000001", "description": "Consensus timestamp"},
    },
    "required": ["account_id", "amount", "timestamp"],
}


def plan(account: int, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_ACCOUNT, Op.EQ, account)
    found = query.filters(TIMESTAMP)
    if any(item.op is Op.EQ for item in found):
        select.any_of(_TIMESTAMP, [item.value for item in found if item.op is Op.EQ])
    for item in found:
        if item.op is not Op.EQ:
            select.compare(_TIMESTAMP, item.op, item.value)
    return select.order_by([_TIMESTAMP], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "account_id": format_encoded(row["account_id"]),
        "amount": row["amount"],
        "timestamp": format_ns(row["consensus_timestamp"]),
    }


async def _locate(request: Request, ctx: AppContext) -> int:
    account = await account_ref.path_account(request, ctx)
    if not await ctx.database.fetch(Select(_EXISTS).compare(_ID, Op.EQ, account).limit(1).build()):
        raise NotFound()
    return account


async def _prepare(account: int, query: ParsedQuery, ctx: AppContext) -> int:
    if any(item.op is Op.NE for item in query.filters(TIMESTAMP)):
        raise BadRequest(NE_NOT_SUPPORTED)
    return account


def _anchors(account: int, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    timestamp = row["consensus_timestamp"]
    return [Anchor(TIMESTAMP.name, format_ns(timestamp) or "", number=timestamp)]


LIST = ListSpec[int, int](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/rewards",
    items="rewards",
    params=PARAMS,
    default_order=Order.DESC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=60,
    summary="List an account's staking rewards",
    description="The staking reward payouts to the account, newest first by default, with keyset pagination "
    "through links.next. An account that does not exist is a 404.",
    item_schema=REWARD,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
