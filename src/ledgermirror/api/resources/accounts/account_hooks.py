"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/hooks``: the account's hooks (HIP-1195), highest hook id
first by default, deleted hooks included.

``hook.id`` takes up to 100 values (``[op:]number``, number >= 0): equalities form one set, ``gt``/``gte``
raise the lower bound and ``lt``/``lte`` lower the upper bound; an equality outside the bounds matches
nothing, and ``ne`` is accepted and has no effect, as in the reference's Java service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

MAX_VALUES = 100

HOOK_ID = ParamSpec[int](
    "hook.id",
    values.integer_between(0),
    "The hook id (0 to 2^63-1) with an optional operator; up to 100 values. Equalities form one set, gt/gte and "
    "lt/lte bound it; ne has no effect.",
    schema=schemas.INT64_QUERY,
    example="gte:1",
    max_count=MAX_VALUES,
)

PARAMS = ParamSet([HOOK_ID, LIMIT, ORDER])

_SELECT = """select h.admin_key, h.contract_id, h.created_timestamp, h.deleted,
    h.extension_point::text as extension_point, h.hook_id, h.owner_id,
    lower(h.timestamp_range) as timestamp_from, upper(h.timestamp_range) as timestamp_to,
    h.timestamp_range is null as no_range, h.type::text as type
from hook h"""

_OWNER = Column("h.owner_id")
_HOOK = Column("h.hook_id")


@dataclass(frozen=True, slots=True)
class Hooks:
    owner: int
    lower: int
    upper: int
    equal: list[int] | None
    """The equalities inside the bounds (None: no equality was given)."""


async def _prepare(owner: int, query: ParsedQuery, ctx: AppContext) -> Hooks:
    filters = query.filters(HOOK_ID)
    lower, upper = inclusive_bounds([item for item in filters if item.op is not Op.EQ])
    equal: list[int] | None = None
    if any(item.op is Op.EQ for item in filters):
        equal = sorted({item.value for item in filters if item.op is Op.EQ and lower <= item.value <= upper})
        if not equal:
            raise NothingMatches
    if lower > upper:
        raise NothingMatches
    return Hooks(owner, lower, upper, equal)


def plan(hooks: Hooks, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_OWNER, Op.EQ, hooks.owner)
    select.compare(_HOOK, Op.GTE, hooks.lower).compare(_HOOK, Op.LTE, hooks.upper)
    if hooks.equal is not None:
        select.any_of(_HOOK, hooks.equal)
    return select.order_by([_HOOK], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    stamp = None
    if not row["no_range"]:
        stamp = {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])}
    return {
        "admin_key": render_key(row["admin_key"]),
        "contract_id": format_encoded(row["contract_id"]),
        "created_timestamp": format_ns(row["created_timestamp"]),
        "deleted": row["deleted"],
        "extension_point": row["extension_point"],
        "hook_id": row["hook_id"],
        "owner_id": format_encoded(row["owner_id"]),
        "timestamp_range": stamp,
        "type": row["type"],
    }


def _anchors(hooks: Hooks, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(HOOK_ID.name, str(row["hook_id"]), number=row["hook_id"])]


HOOK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "contract_id": schemas.ENTITY_ID,
        "created_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "deleted": {"type": "boolean"},
        "extension_point": {"type": "string", "enum": ["ACCOUNT_ALLOWANCE_HOOK"]},
        "hook_id": {"type": "integer", "format": "int64"},
        "owner_id": schemas.ENTITY_ID,
        "timestamp_range": {**schemas.TIMESTAMP_RANGE, "type": ["object", "null"]},
        "type": {"type": "string", "enum": ["EVM"]},
    },
    "required": [
        "admin_key",
        "contract_id",
        "created_timestamp",
        "deleted",
        "extension_point",
        "hook_id",
        "owner_id",
        "timestamp_range",
        "type",
    ],
}

LIST = ListSpec[int, Hooks](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/hooks",
    items="hooks",
    params=PARAMS,
    default_order=Order.DESC,
    locate=account_ref.path_account,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's hooks",
    description="The hooks the account owns (deleted ones included), in descending hook id order by default, "
    "with pagination through links.next.",
    item_schema=HOOK,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
