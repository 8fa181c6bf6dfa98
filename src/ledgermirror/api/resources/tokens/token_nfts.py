"""``GET /api/v1/tokens/{tokenId}/nfts`` (a token's NFTs, newest serial number first by default) and
``GET /api/v1/tokens/{tokenId}/nfts/{serialNumber}`` (one NFT).

NFTs are listed even when their token or its entity row is missing; ``deleted`` is true when the NFT or its
token is deleted. The object is the one of ``/accounts/{id}/nfts`` (``account_nfts.render``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_nfts
from ledgermirror.api.resources.tokens import token_ref
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.entity_id import EntityId, EvmForm

ACCOUNT_ID = ParamSpec[EntityId](
    "account.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The owner's account id, with an optional operator (eq, ne, gt, gte, lt, lte).",
    schema=schemas.ENTITY_ID_QUERY,
    example="0.0.1001",
)
SERIAL_NUMBER = ParamSpec[int](
    "serialnumber",
    values.integer_between(1),
    "The serial number (1 to 2^63-1), with an optional operator; the key of the pagination.",
    schema=schemas.POSITIVE_INT64_QUERY,
    example="gt:10",
)

PARAMS = ParamSet([ACCOUNT_ID, LIMIT, ORDER, SERIAL_NUMBER])
NO_PARAMS = ParamSet([])

_SELECT = account_nfts.SELECT_NFT
_TOKEN = Column("n.token_id")
_ACCOUNT = Column("n.account_id")
_SERIAL = Column("n.serial_number")

PATH_SERIAL = "serialNumber"
OPENAPI_SERIAL_PARAMETER: dict[str, Any] = {
    "name": PATH_SERIAL,
    "in": "path",
    "required": True,
    "description": "The NFT's serial number (1 to 2^63-1)",
    "schema": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9223372036854775807},
    "example": 1,
}


def plan(token: int, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_TOKEN, Op.EQ, token)
    for item in query.filters(ACCOUNT_ID):
        select.compare(_ACCOUNT, item.op, item.value.encoded)
    for serial in query.filters(SERIAL_NUMBER):
        select.compare(_SERIAL, serial.op, serial.value)
    return select.order_by([_SERIAL], order).limit(limit)


async def _prepare(token: int, query: ParsedQuery, ctx: AppContext) -> int:
    return token


def _anchors(token: int, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(SERIAL_NUMBER.name, str(row["serial_number"]), number=row["serial_number"])]


LIST = ListSpec[int, int](
    path="/api/v1/tokens/{tokenId}/nfts",
    items="nfts",
    params=PARAMS,
    default_order=Order.DESC,
    locate=token_ref.path_token,
    prepare=_prepare,
    plan=plan,
    render=account_nfts.render,
    anchors=_anchors,
    max_age=1,
    summary="List a token's NFTs",
    description="The NFTs of a non-fungible token, in descending serial number order by default, with keyset "
    "pagination through links.next. deleted is true when the NFT or its token is deleted.",
    item_schema=account_nfts.NFT,
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()


def serial_of(path_params: dict[str, Any], ctx: AppContext) -> int:
    """The ``{serialNumber}`` path segment: 1 to 2^63-1, else ``400 Invalid parameter: serialnumber``."""
    try:
        return SERIAL_NUMBER.parse(str(path_params[PATH_SERIAL]), ctx.parse_ctx)
    except InvalidValue:
        raise BadRequest("Invalid parameter: serialnumber") from None


async def get_nft(request: Request, ctx: AppContext) -> Page:
    token = token_ref.token_of(request.path_params, ctx)
    serial = serial_of(request.path_params, ctx)
    query_of(request, ctx, NO_PARAMS)
    select = Select(_SELECT).compare(_TOKEN, Op.EQ, token).compare(_SERIAL, Op.EQ, serial).limit(2)
    rows = await ctx.database.fetch(select.build())
    if len(rows) != 1:
        raise NotFound()
    return Page(account_nfts.render(rows[0]))


ONE_ENDPOINT = Endpoint(
    path="/api/v1/tokens/{tokenId}/nfts/{serialNumber}",
    handler=get_nft,
    params=NO_PARAMS,
    max_age=1,
    summary="Get an NFT",
    description="One NFT of a token by serial number.",
    response_schema=account_nfts.NFT,
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER, OPENAPI_SERIAL_PARAMETER),
)
