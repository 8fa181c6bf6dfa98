"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/tokens``: an owner's current fungible token
allowances, keyset-paginated by (spender, token).

The owner is resolved first (an unknown alias or EVM address is a 404; an unknown numeric id is an empty list),
then the query is validated with the reference's bound rules (``api/querystring/bounds.py``). Only allowances
with an amount left are listed. ``spender.id`` and ``token.id`` together select one range of the
(spender, token) tuple: ``spender.id=gte:2001&token.id=gt:10002`` resumes spender 2001 after token 10002.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import Keyset, Limit, check_node, entity_key, in_query_order, node_bound
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SPENDER_ID = ParamSpec[EntityId | EvmAddress](
    "spender.id",
    values.entity_id(EvmForm.ANY),
    "The spender's account id or EVM address, with an optional operator (eq, gt, gte, lt, lte). At most one "
    "equality, one lower and one upper bound; the primary key of the pagination.",
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="gte:0.0.1000",
    doc_ops=RANGE_OPS,
)
TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The token id, with an optional operator (eq, gt, gte, lt, lte); needs spender.id. A lower bound needs "
    "spender.id gte or eq, an upper bound spender.id lte or eq.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gt:0.0.1000",
    doc_ops=RANGE_OPS,
)

PARAMS = ParamSet([LIMIT, ORDER, SPENDER_ID, TOKEN_ID])

_SELECT = """select owner, spender, token_id, amount, amount_granted,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from token_allowance"""

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


def plan(owner: Owner, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_OWNER, Op.EQ, owner.account)
    for condition in owner.keyset.conditions(lead=("owner", owner.account)):
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


@dataclass(frozen=True, slots=True)
class Owner:
    account: int
    keyset: Keyset


async def _prepare(owner: int, query: ParsedQuery, ctx: AppContext) -> Owner:
    spenders = query.filters(SPENDER_ID)
    spender_ids = await evm_lookup.filter_values(ctx, [item.value for item in spenders])
    spender_limits = [Limit(item.op, encoded or 0) for item, encoded in zip(spenders, spender_ids, strict=True)]
    token_limits = [Limit(item.op, item.value.encoded) for item in query.filters(TOKEN_ID)]
    bounds = in_query_order(
        list(query.given),
        {
            SPENDER_ID.name: lambda: node_bound(SPENDER_ID.name, "spender", spender_limits),
            TOKEN_ID.name: lambda: node_bound(TOKEN_ID.name, "token_id", token_limits),
        },
    )
    spender, token = bounds[SPENDER_ID.name], bounds[TOKEN_ID.name]
    check_node(spender, token)
    if None in spender_ids:  # an EVM address no entity has: nothing matches
        raise NothingMatches
    return Owner(owner, Keyset((spender, token)))


def _anchors(owner: Owner, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return owner.keyset.anchors([entity_key(row["spender"]), entity_key(row["token_id"])])


LIST = ListSpec[int, Owner](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/tokens",
    items="allowances",
    params=PARAMS,
    default_order=Order.ASC,
    locate=account_ref.path_account,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's token allowances",
    description="The fungible token allowances the account has granted that still have an amount left, in "
    "ascending (spender, token) order by default, with keyset pagination through links.next.",
    item_schema=ALLOWANCE,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
