"""``GET /api/v1/tokens``: tokens filtered by id, type, admin public key, associated account or name."""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Op, Order, RawQuery
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.keys import render_key

ACCOUNT_ID = ParamSpec[EntityId | EvmAddress](
    "account.id",
    values.entity_id(EvmForm.ANY),
    "Only tokens this account is currently associated with. A single id, no operator.",
    ops=frozenset(),
    single=True,
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="0.0.1001",
)
NAME = ParamSpec[str](
    "name",
    values.utf8_length(3, 100),
    "Case-insensitive partial or full token name (3 to 100 bytes); repeat to require several. "
    "Cannot be combined with token.id or account.id; results are not paginated.",
    ops=EQ_ONLY,
    schema={"type": "string", "pattern": r"^[^\x00:]{3,100}$", "description": "3 to 100 bytes in UTF-8"},
)
PUBLICKEY = ParamSpec[str](
    "publickey",
    values.public_key,
    "The admin key's public key (hex, optional 0x, raw or DER-encoded).",
    schema=schemas.PUBLIC_KEY_QUERY,
    example="0x3c3d546321ff6f63d701d2ec5c277095874e19f4a235bee1e6bb19258bf362be",
)
TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "Token id, with an optional operator; repeat for ranges. Equalities are combined as one list.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
)
TYPE = ParamSpec[str](
    "type",
    values.choice("ALL", "FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE"),
    "Token type (case-insensitive); ALL means no filter. Repeat to require several.",
    schema={"type": "string", "enum": ["ALL", "FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE"]},
)


def _exclusive_name(raw: RawQuery) -> None:
    if "name" in raw.items:
        if "token.id" in raw.items:
            raise BadRequest("token.id and name can not be used together. Use a more specific name instead.")
        if "account.id" in raw.items:
            raise BadRequest("account.id and name cannot be used together")


PARAMS = ParamSet([ACCOUNT_ID, LIMIT, NAME, ORDER, PUBLICKEY, TOKEN_ID, TYPE], checks=[_exclusive_name])

_SELECT = """select t.token_id, t.name, t.symbol, t.type::text as type, t.decimals, t.metadata, e.key
from token t
join entity e on e.id = t.token_id"""
_SELECT_FOR_ACCOUNT = _SELECT + "\njoin token_account ta on ta.token_id = t.token_id"

_TOKEN_ID = Column("t.token_id")
_TYPE = Column("t.type")
_NAME = Column("t.name")
_PUBLIC_KEY = Column("e.public_key")
_ACCOUNT = Column("ta.account_id")
_ASSOCIATED = Column("ta.associated")


def plan(account: int | None, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT if account is None else _SELECT_FOR_ACCOUNT)
    if account is not None:
        select.compare(_ACCOUNT, Op.EQ, account).is_true(_ASSOCIATED)
    equal = [item.value.encoded for item in query.filters(TOKEN_ID) if item.op is Op.EQ]
    if equal:
        select.any_of(_TOKEN_ID, equal)
    for item in query.filters(TOKEN_ID):
        if item.op is not Op.EQ:
            select.compare(_TOKEN_ID, item.op, item.value.encoded)
    for key in query.filters(PUBLICKEY):
        select.compare(_PUBLIC_KEY, key.op, key.value)
    for kind in query.filters(TYPE):
        if kind.value != "ALL":
            select.compare(_TYPE, kind.op, kind.value)
    for name in query.filters(NAME):
        select.contains_text(_NAME, name.value)
    return select.order_by([_TOKEN_ID], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    metadata = row["metadata"]
    return {
        "admin_key": render_key(row["key"]),
        "metadata": base64.b64encode(metadata).decode() if metadata else "",
        "name": row["name"],
        "symbol": row["symbol"],
        "token_id": format_encoded(row["token_id"]),
        "type": row["type"],
        "decimals": row["decimals"],
    }


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> int | None:
    found = query.filters(ACCOUNT_ID)
    if not found:
        return None
    return await evm_lookup.filter_id(ctx, found[-1].value)


def _anchors(account: int | None, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    if query.has(NAME):  # a name search is not paginated
        return []
    return [Anchor(TOKEN_ID.name, str(EntityId.decode(row["token_id"])), number=row["token_id"])]


LIST = ListSpec[Request, int | None](
    path="/api/v1/tokens",
    items="tokens",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=10,
    summary="List tokens",
    description="Tokens in ascending id order by default, with keyset pagination through links.next.",
    item_schema=schemas.TOKEN,
    tag="tokens",
)
ENDPOINT = LIST.endpoint()
