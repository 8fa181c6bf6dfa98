"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/tokens``: the account's token relationships (associated
tokens), lowest token id first by default.

The path is resolved first (400/404 as every account route), then the account must exist (any entity type;
else ``404 Not found``). ```decimals`` comes from the token row (null when there is none), and a relationship
whose freeze or KYC status is unset takes the token's.
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
from ledgermirror.db.sql import Column, Select, template
from ledgermirror.ledger.entity_id import EntityId, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The token id, with an optional operator (eq, gt, gte, lt, lte); equalities form one list. The key of the "
    "pagination.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
    doc_ops=RANGE_OPS,
)

PARAMS = ParamSet([LIMIT, ORDER, TOKEN_ID])
TOKEN_NE = "Not equal (ne) comparison operator is not supported for token.id"

_SELECT = """select ta.automatic_association, ta.balance, ta.created_timestamp, ta.token_id,
    coalesce(ta.freeze_status, t.freeze_status) as freeze_status,
    coalesce(ta.kyc_status, t.kyc_status) as kyc_status, t.decimals
from token_account ta
left join token t on t.token_id = ta.token_id"""
_EXISTS = "select type from entity where id = {account}"

_ACCOUNT = Column("ta.account_id")
_ASSOCIATED = Column("ta.associated")
_TOKEN = Column("ta.token_id")

FREEZE_STATUS = {0: "NOT_APPLICABLE", 1: "FROZEN", 2: "UNFROZEN"}
KYC_STATUS = {0: "NOT_APPLICABLE", 1: "GRANTED", 2: "REVOKED"}


def plan(account: int, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_ACCOUNT, Op.EQ, account).is_true(_ASSOCIATED)
    tokens = query.filters(TOKEN_ID)
    equal = [item.value.encoded for item in tokens if item.op is Op.EQ]
    if equal:
        select.any_of(_TOKEN, equal)
    for item in tokens:
        if item.op is not Op.EQ:
            select.compare(_TOKEN, item.op, item.value.encoded)
    return select.order_by([_TOKEN], order).limit(limit)


async def _locate(request: Request, ctx: AppContext) -> int:
    account = await account_ref.path_account(request, ctx)
    if not await ctx.database.fetch(template(_EXISTS, account=account)):
        raise NotFound()
    return account


async def _prepare(account: int, query: ParsedQuery, ctx: AppContext) -> int:
    if any(item.op is Op.NE for item in query.filters(TOKEN_ID)):
        raise BadRequest(TOKEN_NE)
    return account


def render(account: int, row: Any) -> dict[str, Any]:
    return {
        "automatic_association": row["automatic_association"],
        "balance": row["balance"],
        "created_timestamp": format_ns(row["created_timestamp"]),
        "decimals": row["decimals"],
        "token_id": format_encoded(row["token_id"]),
        "freeze_status": FREEZE_STATUS.get(row["freeze_status"]),
        "kyc_status": KYC_STATUS.get(row["kyc_status"]),
    }


def _anchors(account: int, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(TOKEN_ID.name, str(EntityId.decode(row["token_id"])), number=row["token_id"])]


RELATIONSHIP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "automatic_association": {"type": ["boolean", "null"]},
        "balance": {"type": "integer", "format": "int64"},
        "created_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "decimals": {"type": ["integer", "null"], "format": "int64", "description": "null: an unknown token"},
        "token_id": schemas.ENTITY_ID,
        "freeze_status": {"type": ["string", "null"], "enum": [*FREEZE_STATUS.values(), None]},
        "kyc_status": {"type": ["string", "null"], "enum": [*KYC_STATUS.values(), None]},
    },
    "required": [
        "automatic_association",
        "balance",
        "created_timestamp",
        "decimals",
        "token_id",
        "freeze_status",
        "kyc_status",
    ],
}

LIST = ListSpec[int, int](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/tokens",
    items="tokens",
    params=PARAMS,
    default_order=Order.ASC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render_with=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's token relationships",
    description="The tokens the account is associated with, their balance, freeze and KYC status, in ascending "
    "token order by default, with pagination through links.next.",
    item_schema=RELATIONSHIP,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
