"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto``: an owner's current hbar allowances.

The owner is resolved first (an unknown alias or EVM address is a 404; an unknown numeric id is an empty list),
then the query is validated. Only allowances with a remaining amount are listed, one per spender, ordered by
spender (descending by default).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import Filter, ParamSet, ParamSpec
from ledgermirror.api.resources import account_ref, schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SPENDER_ID = ParamSpec[EntityId | EvmAddress](
    "spender.id",
    values.entity_id(EvmForm.ANY),
    "The spender's account id or EVM address, with an optional operator (eq, gt, gte, lt, lte; not ne). "
    "Repeat for ranges; equalities are combined as one list.",
    schema={"type": "string"},
    example="gte:0.0.1000",
)

PARAMS = ParamSet([LIMIT, ORDER, SPENDER_ID])

NE_NOT_SUPPORTED = "Not equal (ne) comparison operator is not supported for spender.id"

_SELECT = """select owner, spender, amount, amount_granted,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from crypto_allowance"""
_EVM_LOOKUP = "select evm_address, id from entity where evm_address = any($1::bytea[]) and deleted is not true"

_OWNER = Column("owner")
_SPENDER = Column("spender")
_AMOUNT = Column("amount")

ALLOWANCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "format": "int64", "description": "Remaining tinybars the spender may use"},
        "amount_granted": {"type": "integer", "format": "int64", "description": "Tinybars granted"},
        "owner": schemas.ENTITY_ID,
        "spender": schemas.ENTITY_ID,
        "timestamp": schemas.TIMESTAMP_RANGE,
    },
    "required": ["amount", "amount_granted", "owner", "spender", "timestamp"],
}

RESPONSE: dict[str, Any] = schemas.list_response("allowances", ALLOWANCE)


class _NothingMatches(Exception):
    """A spender range bound is an EVM address that belongs to no entity."""


def plan(owner: int, spenders: list[Filter[int | None]], *, limit: int, order: Order) -> Select:
    """``spenders`` holds resolved spender filters (encoded ids, ``None`` for an address of no entity);
    equalities form one list, ranges are ANDed."""
    select = Select(_SELECT).compare(_OWNER, Op.EQ, owner)
    if any(item.op is Op.EQ for item in spenders):
        select.any_of(_SPENDER, [item.value for item in spenders if item.op is Op.EQ and item.value is not None])
    for item in spenders:
        if item.op is not Op.EQ:
            select.compare(_SPENDER, item.op, item.value)
    select.compare(_AMOUNT, Op.GT, 0)
    return select.order_by([_SPENDER], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "amount": row["amount"],
        "amount_granted": row["amount_granted"],
        "owner": format_encoded(row["owner"]),
        "spender": format_encoded(row["spender"]),
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
    }


async def list_crypto_allowances(request: Request, ctx: AppContext) -> Page:
    owner = await account_ref.resolve_account(request.path_params[account_ref.PATH_PARAMETER], ctx)
    query = PARAMS.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    if any(item.op is Op.NE for item in query.filters(SPENDER_ID)):
        raise BadRequest(NE_NOT_SUPPORTED)
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.DESC)
    try:
        spenders = await _resolve_spenders(query.filters(SPENDER_ID), ctx)
    except _NothingMatches:
        return Page({"allowances": [], "links": {"next": None}})
    probe = ctx.settings.pagination_probe
    statement = plan(owner, spenders, limit=limit + 1 if probe else limit, order=order).build()
    rows = await ctx.database.fetch(statement)
    more = len(rows) > limit if probe else len(rows) == limit
    rows = rows[:limit]
    link = None
    if more and rows:
        anchor = Anchor(
            "spender.id", str(EntityId.decode(rows[-1]["spender"])), to_number=values.entity_number(ctx.parse_ctx)
        )
        link = next_link(request.scope["path"], query.raw, [anchor], order)
    return Page({"allowances": [render(row) for row in rows], "links": {"next": link}}, link)


async def _resolve_spenders(
    found: list[Filter[EntityId | EvmAddress]], ctx: AppContext
) -> list[Filter[int | None]]:
    """Encoded spender ids; opaque EVM addresses are looked up. An unknown address is ``None`` in an equality
    (it matches nothing) and empties the answer in a range bound."""
    addresses = [item.value.address for item in found if isinstance(item.value, EvmAddress)]
    known: dict[bytes, int] = {}
    if addresses:
        for row in await ctx.database.fetch_raw(_EVM_LOOKUP, addresses):
            address, found_id = bytes(row["evm_address"]), int(row["id"])
            known[address] = min(found_id, known.get(address, found_id))
    resolved: list[Filter[int | None]] = []
    for item in found:
        value = item.value
        encoded = value.encoded if isinstance(value, EntityId) else known.get(value.address)
        if encoded is None and item.op is not Op.EQ:
            raise _NothingMatches
        resolved.append(Filter(item.key, item.op, encoded))
    return resolved


ENDPOINT = Endpoint(
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto",
    handler=list_crypto_allowances,
    params=PARAMS,
    max_age=1,
    summary="List an account's crypto allowances",
    description="The hbar allowances the account has granted that still have an amount left, one per spender, "
    "in descending spender order by default, with keyset pagination through links.next.",
    response_schema=RESPONSE,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
