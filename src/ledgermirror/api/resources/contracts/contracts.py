"""``GET /api/v1/contracts``: the contract entities by id (``upstream-contracts.md`` §2).

Every ``CONTRACT`` entity of the current table, deleted ones included, with its ``contract`` row's file, ordered
by id (descending by default) and paged on ``contract.id``. ``contract.id`` takes an entity id with any operator,
or an EVM address written without ``0x`` with ``eq`` only (a long-zero address names its num; any other is looked
up among live contracts, ``404`` with the reference's text when none has it). Equalities are one ``id = any(...)``
condition, every other value its own condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, query_first
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import (
    Filter,
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_ref, contract_render
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, format_encoded


def _contract_id(text: str, ctx: ParseContext) -> EntityId | contract_ref.ContractAddress:
    """An entity id, or an EVM address written without ``0x`` (the reference's ``contract.id`` takes only
    ``[shard.][realm.]<40 hex digits>``; ``0x<address>`` is ``400 Invalid parameter: contract.id`` there)."""
    if text.startswith("0x"):
        raise InvalidValue(text)
    try:
        return contract_ref.parse_contract(text, shard=ctx.shard, realm=ctx.realm)
    except BadRequest:
        raise InvalidValue(text) from None


def _written_as_address(item: Filter[Any]) -> bool:
    """Whether the value (after its operator) was written as an EVM address, which allows ``eq`` only."""
    return contract_ref.is_evm_address(item.text.rpartition(":")[2])


CONTRACT_ID = ParamSpec[EntityId | contract_ref.ContractAddress](
    "contract.id",
    _contract_id,
    "The contract's id with an optional operator, or its EVM address without 0x (eq only); repeat for several "
    "(equalities are any of them, every other value its own condition).",
    schema={
        "type": "string",
        "pattern": rf"^(((eq|gt|gte|lt|lte|ne):)?{schemas.ENTITY_ID_VALUE}|(eq:)?[0-9a-fA-F]{{40}})$",
    },
    example="0.0.1001",
    pattern_has_ops=True,
)
PARAMS = ParamSet([CONTRACT_ID, LIMIT, ORDER])

_SELECT = f"""select {contract_render.COLUMNS}
from entity e
left join contract c on c.id = e.id"""
_IS_CONTRACT = "e.type = 'CONTRACT'"
_ID = Column("e.id")
_INVALID = "Invalid parameter: contract.id"


@dataclass(frozen=True, slots=True)
class Ids:
    """The resolved ``contract.id`` filters: equalities (any of) and the other comparisons."""

    equal: tuple[int, ...]
    compared: tuple[tuple[Op, int], ...]


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Ids:
    equal: list[int] = []
    compared: list[tuple[Op, int]] = []
    filters = query.filters(CONTRACT_ID)
    if any(item.op is not Op.EQ and _written_as_address(item) for item in filters):
        raise BadRequest(_INVALID)
    for item in filters:
        ref = item.value
        encoded = ref.encoded if isinstance(ref, EntityId) else await contract_ref.resolve_address(ctx, ref)
        if item.op is Op.EQ:
            equal.append(encoded)
        else:
            compared.append((item.op, encoded))
    return Ids(tuple(equal), tuple(compared))


def plan(ids: Ids, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).where(_IS_CONTRACT)
    for op, encoded in ids.compared:
        select.compare(_ID, op, encoded)
    if ids.equal:
        select.any_of(_ID, ids.equal)
    return select.order_by([_ID], order).limit(limit)


def _anchors(ids: Ids, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    encoded = int(row["id"])
    return [Anchor(CONTRACT_ID.name, format_encoded(encoded) or "", number=encoded)]


LIST = ListSpec[Request, Ids](
    path="/api/v1/contracts",
    items="contracts",
    params=PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render=contract_render.render,
    anchors=_anchors,
    max_age=10,
    summary="List contracts",
    description="Contract entities (deleted ones included) by id, descending by default, filtered by contract.id "
    "(an id with any operator, or an EVM address without 0x with eq), with pagination on contract.id through "
    "links.next.",
    item_schema=contract_render.CONTRACT_SCHEMA,
    tag="contracts",
)
ENDPOINT = LIST.endpoint()
