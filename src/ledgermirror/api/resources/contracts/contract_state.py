"""``GET /api/v1/contracts/{contractIdOrAddress}/state``: a contract's storage (``upstream-contracts.md`` §8).

The contract is resolved as every contract route does (``contract_ref``; an unknown create2 address is a 404,
an unknown id an empty list). Without ``timestamp`` the slots are the current ``contract_state`` rows (full
32-byte slots, ``timestamp`` = the last modification). With ``timestamp`` (every operator but ``ne``; ``eq``
means at or before) they are rebuilt from ``contract_state_change``: per slot the newest change matching every
timestamp condition, its value the one written (or, for a read, the one read). State changes store slots with
their leading zero bytes trimmed, so ``slot`` values are compared in that form there.

Ordered by slot, ascending by default, and paged on ``slot`` (the 32-byte word, ``0x`` and 64 hex digits).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_ref
from ledgermirror.api.resources.contracts.contract_encoding import entity_address, to_uint256
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SLOT_BYTES = 32
SLOT = ParamSpec[int](
    "slot",
    values.storage_slot,
    "A storage slot (up to 64 hex digits, optional 0x), with an optional operator (not ne); repeat for several "
    "(equalities are any of them, every other value its own condition).",
    ops=RANGE_OPS,
    schema={"type": "string", "pattern": r"^(0x)?[0-9A-Fa-f]{1,64}$"},
    example="gt:0x0000000000000000000000000000000000000000000000000000000000000001",
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The state as of this consensus timestamp (eq means at or before), with an optional operator (not ne); "
    "repeat for ranges. Each slot's newest change matching every condition answers.",
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
    doc_ops=RANGE_OPS,
)
PARAMS = ParamSet([LIMIT, ORDER, SLOT, TIMESTAMP])
_NE_TIMESTAMP = "Not equals (ne) operator is not supported for timestamp"

_CURRENT = """select cs.contract_id, cs.modified_timestamp as consensus_timestamp, cs.slot, cs.value, e.evm_address
from contract_state cs
left join entity e on e.id = cs.contract_id"""
_HISTORICAL = """select distinct on (csc.slot) csc.contract_id, csc.consensus_timestamp, csc.slot,
    coalesce(csc.value_written, csc.value_read) as value, e.evm_address
from contract_state_change csc
left join entity e on e.id = csc.contract_id"""
_CS_CONTRACT = Column("cs.contract_id")
_CS_SLOT = Column("cs.slot")
_CSC_CONTRACT = Column("csc.contract_id")
_CSC_SLOT = Column("csc.slot")
_CSC_TIMESTAMP = Column("csc.consensus_timestamp")


def full_slot(value: int) -> bytes:
    """A slot as ``contract_state`` stores it: the 32-byte word."""
    return value.to_bytes(SLOT_BYTES, "big")


def trimmed_slot(value: int) -> bytes:
    """A slot as ``contract_state_change`` stores it: leading zero bytes trimmed (slot 0 is empty)."""
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


@dataclass(frozen=True, slots=True)
class StateQuery:
    contract: int
    historical: bool


async def _prepare(ref: contract_ref.ContractRef, query: ParsedQuery, ctx: AppContext) -> StateQuery:
    stamps = query.filters(TIMESTAMP)
    if any(stamp.op is Op.NE for stamp in stamps):
        raise BadRequest(_NE_TIMESTAMP)
    contract = ref.encoded if isinstance(ref, EntityId) else await contract_ref.resolve_address(ctx, ref)
    return StateQuery(contract, historical=bool(stamps))


def _slot_conditions(select: Select, query: ParsedQuery, column: Column, form: Any) -> None:
    equal = [form(item.value) for item in query.filters(SLOT) if item.op is Op.EQ]
    for item in query.filters(SLOT):
        if item.op is not Op.EQ:
            select.compare(column, item.op, form(item.value))
    if equal:
        select.any_of(column, equal)


def plan(state: StateQuery, query: ParsedQuery, limit: int, order: Order) -> Select:
    if not state.historical:
        select = Select(_CURRENT).compare(_CS_CONTRACT, Op.EQ, state.contract)
        _slot_conditions(select, query, _CS_SLOT, full_slot)
        return select.order_by([_CS_SLOT], order).limit(limit)
    select = Select(_HISTORICAL).compare(_CSC_CONTRACT, Op.EQ, state.contract)
    for stamp in query.filters(TIMESTAMP):
        select.compare(_CSC_TIMESTAMP, Op.LTE if stamp.op is Op.EQ else stamp.op, stamp.value)
    _slot_conditions(select, query, _CSC_SLOT, trimmed_slot)
    return select.order_by([_CSC_SLOT], order).then_by(_CSC_TIMESTAMP, Order.DESC).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "address": entity_address(row["evm_address"], row["contract_id"]),
        "contract_id": format_encoded(row["contract_id"]),
        "timestamp": format_ns(row["consensus_timestamp"]),
        "slot": to_uint256(row["slot"]),
        "value": to_uint256(row["value"]),
    }


def _anchors(state: StateQuery, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    slot = bytes(row["slot"])
    return [Anchor(SLOT.name, to_uint256(slot), number=int.from_bytes(slot, "big"))]


_WORD: dict[str, Any] = {"type": ["string", "null"], "pattern": "^0x[0-9a-fA-F]{64}$"}
STATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": ["string", "null"], "pattern": "^0x[0-9a-fA-F]{40}$"},
        "contract_id": schemas.ENTITY_ID,
        "timestamp": {"type": "string", "example": "1586567700.453054000"},
        "slot": _WORD,
        "value": _WORD,
    },
    "required": ["address", "contract_id", "timestamp", "slot", "value"],
}

LIST = ListSpec[contract_ref.ContractRef, StateQuery](
    path="/api/v1/contracts/{contractIdOrAddress}/state",
    items="state",
    params=PARAMS,
    default_order=Order.ASC,
    locate=contract_ref.path_contract,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List a contract's state",
    description="A contract's storage slots and values, ascending by slot by default: the current state, or with "
    "timestamp the state rebuilt from the state changes as of then; filtered by slot, with pagination on slot "
    "through links.next.",
    item_schema=STATE_SCHEMA,
    tag="contracts",
    path_params=(contract_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
