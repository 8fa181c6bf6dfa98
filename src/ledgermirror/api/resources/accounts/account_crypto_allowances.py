"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto``: an owner's current hbar allowances.

The owner is resolved first (an unknown alias or EVM address is a 404; an unknown numeric id is an empty list),
then the query is validated. Only allowances with a remaining amount are listed, one per spender, ordered by
spender (descending by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import Filter, ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SPENDER_ID = ParamSpec[EntityId | EvmAddress](
    "spender.id",
    values.entity_id(EvmForm.ANY),
    "The spender's account id or EVM address, with an optional operator (eq, gt, gte, lt, lte; not ne). "
    "Repeat for ranges; equalities are combined as one list.",
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="gte:0.0.1000",
    doc_ops=RANGE_OPS,
)

PARAMS = ParamSet([LIMIT, ORDER, SPENDER_ID])

NE_NOT_SUPPORTED = "Not equal (ne) comparison operator is not supported for spender.id"

_SELECT = """select owner, spender, amount, amount_granted,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from crypto_allowance"""

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


def plan(owner: Owner, query: ParsedQuery, limit: int, order: Order) -> Select:
    """``owner.spenders`` holds resolved spender filters (encoded ids, ``None`` for an address of no entity);
    equalities form one list, ranges are ANDed."""
    spenders = owner.spenders
    select = Select(_SELECT).compare(_OWNER, Op.EQ, owner.account)
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


async def _prepare(owner: int, query: ParsedQuery, ctx: AppContext) -> Owner:
    found = query.filters(SPENDER_ID)
    if any(item.op is Op.NE for item in found):
        raise BadRequest(NE_NOT_SUPPORTED)
    encoded = await evm_lookup.filter_values(ctx, [item.value for item in found])
    spenders: list[Filter[int | None]] = []
    for item, spender in zip(found, encoded, strict=True):
        if spender is None and item.op is not Op.EQ:  # a bound on an address no entity has: nothing matches
            raise NothingMatches
        spenders.append(Filter(item.key, item.op, spender))
    return Owner(owner, spenders)


@dataclass(frozen=True, slots=True)
class Owner:
    """The path account and the resolved spender filters (``None``: an address no entity has)."""

    account: int
    spenders: list[Filter[int | None]]


def _anchors(owner: Owner, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(SPENDER_ID.name, str(EntityId.decode(row["spender"])), number=row["spender"])]


LIST = ListSpec[int, Owner](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto",
    items="allowances",
    params=PARAMS,
    default_order=Order.DESC,
    locate=account_ref.path_account,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's crypto allowances",
    description="The hbar allowances the account has granted that still have an amount left, one per spender, "
    "in descending spender order by default, with keyset pagination through links.next.",
    item_schema=ALLOWANCE,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
