"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/tokens``: an owner's current fungible token
allowances, keyset-paginated by (spender, token).

The owner is resolved first (an unknown alias or EVM address is a 404; an unknown numeric id is an empty list),
then the query is validated with the reference's bound rules (``api/querystring/bounds.py``). Only allowances
with an amount left are listed. ``spender.id`` and ``token.id`` together select one range of the
(spender, token) tuple: ``spender.id=gte:2001&token.id=gt:10002`` resumes spender 2001 after token 10002.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import (
    Keyset,
    Limit,
    check_node,
    entity_reader,
    in_query_order,
    node_bound,
)
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import next_link
from ledgermirror.api.querystring.params import Filter, ParamSet, ParamSpec
from ledgermirror.api.resources import account_ref, schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SPENDER_ID = ParamSpec[EntityId | EvmAddress](
    "spender.id",
    values.entity_id(EvmForm.ANY),
    "The spender's account id or EVM address, with an optional operator (eq, gt, gte, lt, lte). At most one "
    "equality, one lower and one upper bound; the primary key of the pagination.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
)
TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The token id, with an optional operator (eq, gt, gte, lt, lte); needs spender.id. A lower bound needs "
    "spender.id gte or eq, an upper bound spender.id lte or eq.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gt:0.0.1000",
)

PARAMS = ParamSet([LIMIT, ORDER, SPENDER_ID, TOKEN_ID])

_SELECT = """select owner, spender, token_id, amount, amount_granted,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from token_allowance"""
_EVM_LOOKUP = "select evm_address, id from entity where evm_address = any($1::bytea[]) and deleted is not true"

_OWNER = Column("owner")
_AMOUNT = Column("amount")
COLUMNS = {"owner": _OWNER, "spender": Column("spender"), "token_id": Column("token_id")}

ALLOWANCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "format": "int64", "description": "Remaining amount the spender may use"},
        "amount_granted": {"type": "integer", "format": "int64", "description": "Amount granted"},
        "owner": schemas.ENTITY_ID,
        "spender": schemas.ENTITY_ID,
        "timestamp": schemas.TIMESTAMP_RANGE,
        "token_id": schemas.ENTITY_ID,
    },
    "required": ["amount", "amount_granted", "owner", "spender", "timestamp", "token_id"],
}
RESPONSE: dict[str, Any] = schemas.list_response("allowances", ALLOWANCE)


def plan(owner: int, keyset: Keyset, *, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_OWNER, Op.EQ, owner)
    for condition in keyset.conditions(lead=("owner", owner)):
        select.compare_rows([COLUMNS[key] for key in condition.columns], condition.op, condition.values)
    select.compare(_AMOUNT, Op.GT, 0)
    return select.order_by([COLUMNS["spender"], COLUMNS["token_id"]], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "amount": row["amount"],
        "amount_granted": row["amount_granted"],
        "owner": format_encoded(row["owner"]),
        "spender": format_encoded(row["spender"]),
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
        "token_id": format_encoded(row["token_id"]),
    }


async def list_token_allowances(request: Request, ctx: AppContext) -> Page:
    owner = await account_ref.resolve_account(request.path_params[account_ref.PATH_PARAMETER], ctx)
    query = PARAMS.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    spenders = query.filters(SPENDER_ID)
    spender_ids = await encoded_ids(spenders, ctx)
    spender_limits = [Limit(item.op, encoded or 0) for item, encoded in zip(spenders, spender_ids, strict=True)]
    token_limits = [Limit(item.op, item.value.encoded) for item in query.filters(TOKEN_ID)]
    bounds = in_query_order(
        list(query.raw.items),
        {
            SPENDER_ID.name: lambda: node_bound(SPENDER_ID.name, "spender", spender_limits),
            TOKEN_ID.name: lambda: node_bound(TOKEN_ID.name, "token_id", token_limits),
        },
    )
    spender, token = bounds[SPENDER_ID.name], bounds[TOKEN_ID.name]
    check_node(spender, token)
    if None in spender_ids:  # an EVM address no entity has: nothing matches
        return Page({"allowances": [], "links": {"next": None}})
    keyset = Keyset((spender, token))
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.ASC)
    probe = ctx.settings.pagination_probe
    rows = await ctx.database.fetch(plan(owner, keyset, limit=limit + 1 if probe else limit, order=order).build())
    more = len(rows) > limit if probe else len(rows) == limit
    rows = rows[:limit]
    link = None
    if more and rows:
        last = [str(EntityId.decode(rows[-1]["spender"])), str(EntityId.decode(rows[-1]["token_id"]))]
        reader = entity_reader(ctx.parse_ctx)
        anchors = keyset.anchors(last, {SPENDER_ID.name: reader, TOKEN_ID.name: reader})
        if anchors:
            link = next_link(request.scope["path"], query.raw, anchors, order)
    return Page({"allowances": [render(row) for row in rows], "links": {"next": link}}, link)


async def encoded_ids(found: Sequence[Filter[EntityId | EvmAddress]], ctx: AppContext) -> list[int | None]:
    """The encoded id of each filter value; opaque EVM addresses are looked up (``None``: no entity has it)."""
    addresses = [item.value.address for item in found if isinstance(item.value, EvmAddress)]
    known: dict[bytes, int] = {}
    if addresses:
        for row in await ctx.database.fetch_raw(_EVM_LOOKUP, addresses):
            address, encoded = bytes(row["evm_address"]), int(row["id"])
            known[address] = min(encoded, known.get(address, encoded))
    return [
        item.value.encoded if isinstance(item.value, EntityId) else known.get(item.value.address) for item in found
    ]


ENDPOINT = Endpoint(
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/tokens",
    handler=list_token_allowances,
    params=PARAMS,
    max_age=1,
    summary="List an account's token allowances",
    description="The fungible token allowances the account has granted that still have an amount left, in "
    "ascending (spender, token) order by default, with keyset pagination through links.next.",
    response_schema=RESPONSE,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
