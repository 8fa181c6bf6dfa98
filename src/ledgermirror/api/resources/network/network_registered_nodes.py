"""``GET /api/v1/network/registered-nodes``: the network's registered nodes (block nodes, mirror nodes, RPC
relays, general services; HIP-1137), lowest id first by default, deleted ones left out.

``registerednode.id`` takes at most two values: an equality alone, or lower and upper bounds (an equality with
anything else, or a lower bound above the upper one, is a 400). ``type`` keeps the nodes with an endpoint of
that role (the ``type`` array holds the role numbers of the node's endpoints).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

ROLES = ("BLOCK_NODE", "GENERAL_SERVICE", "MIRROR_NODE", "RPC_RELAY")
ROLE_NUMBERS = {name: number for number, name in enumerate(ROLES, start=1)}
"""The ``registered_node.type`` numbers of the endpoint roles."""
_ROLE_KEYS = {"block_node": "BLOCK_NODE", "general_service": "GENERAL_SERVICE", "mirror_node": "MIRROR_NODE"}
_ROLE_KEYS["rpc_relay"] = "RPC_RELAY"

EQ_COMBINED = "The 'eq' operator cannot be combined with other operators"
INVERTED = "Invalid range: lower bound exceeds upper bound"

REGISTERED_NODE_ID = ParamSpec[int](
    "registerednode.id",
    values.integer_between(0),
    "The registered node id with an optional eq, gt, gte, lt or lte operator; at most two values (an equality "
    "alone, or a lower and an upper bound).",
    ops=RANGE_OPS,
    schema=schemas.INT64_QUERY,
    example="gte:1",
    max_count=2,
)
TYPE = ParamSpec[str](
    "type",
    values.choice(*ROLES),
    "Only nodes with an endpoint of this role (case-insensitive).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "string", "enum": list(ROLES)},
    example="BLOCK_NODE",
)


def _at_most_two(raw: Any) -> None:
    count = len(raw.items.get(REGISTERED_NODE_ID.name, ()))
    if count > 2:
        raise BadRequest(
            "Parameter values count exceeds maximum number allowed: "
            f"{REGISTERED_NODE_ID.name} count: {count} max: 2"
        )


PARAMS = ParamSet([LIMIT, ORDER, REGISTERED_NODE_ID, TYPE], checks=[_at_most_two])

_SELECT = """select r.admin_key, r.created_timestamp, r.description, r.registered_node_id, r.service_endpoints,
    lower(r.timestamp_range) as timestamp_from, upper(r.timestamp_range) as timestamp_to
from registered_node r"""
_ID = Column("r.registered_node_id")
_TYPE = Column("r.type")


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> tuple[int, int]:
    ids = query.filters(REGISTERED_NODE_ID)
    if any(item.op is Op.EQ for item in ids) and len(ids) > 1:
        raise BadRequest(EQ_COMBINED)
    bounds = (ids[0].value, ids[0].value) if ids and ids[0].op is Op.EQ else inclusive_bounds(ids)
    if bounds[0] > bounds[1]:
        raise BadRequest(INVERTED)
    return bounds


def plan(bounds: tuple[int, int], query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT).compare(_ID, Op.GTE, bounds[0]).compare(_ID, Op.LTE, bounds[1])
    select.where("r.deleted is false")
    role = query.last(TYPE, None)
    if role is not None:
        select.array_contains(_TYPE, [ROLE_NUMBERS[role]], "smallint")
    return select.order_by([_ID], order).limit(limit)


def _endpoint(item: dict[str, Any]) -> dict[str, Any]:
    roles = {key: item.get(key) for key in _ROLE_KEYS}
    present = [key for key, value in roles.items() if value is not None]
    return {
        "block_node": roles["block_node"],
        "domain_name": item.get("domain_name"),
        "general_service": roles["general_service"],
        "ip_address": item.get("ip_address"),
        "mirror_node": roles["mirror_node"],
        "port": item.get("port"),
        "requires_tls": bool(item.get("requires_tls", False)),
        "rpc_relay": roles["rpc_relay"],
        "type": _ROLE_KEYS[present[0]] if present else "GENERAL_SERVICE",
    }


def render(row: Any) -> dict[str, Any]:
    stored = row["service_endpoints"]
    endpoints = json.loads(stored) if isinstance(stored, str) else stored
    return {
        "admin_key": render_key(row["admin_key"]),
        "created_timestamp": format_ns(row["created_timestamp"]),
        "description": row["description"],
        "registered_node_id": row["registered_node_id"],
        "service_endpoints": [_endpoint(item) for item in endpoints or [] if isinstance(item, dict)],
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
    }


def _anchors(bounds: tuple[int, int], query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(REGISTERED_NODE_ID.name, str(row["registered_node_id"]), number=row["registered_node_id"])]


_ROLE_OBJECT: dict[str, Any] = {"type": ["object", "null"]}
ENDPOINT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "block_node": {
            "type": ["object", "null"],
            "properties": {"endpoint_apis": {"type": "array", "items": {"type": "string"}}},
        },
        "domain_name": {"type": ["string", "null"]},
        "general_service": {
            "type": ["object", "null"],
            "properties": {"description": {"type": ["string", "null"]}},
        },
        "ip_address": {"type": ["string", "null"]},
        "mirror_node": _ROLE_OBJECT,
        "port": {"type": ["integer", "null"], "format": "int32"},
        "requires_tls": {"type": "boolean"},
        "rpc_relay": _ROLE_OBJECT,
        "type": {"type": "string", "enum": list(ROLES)},
    },
    "required": ["block_node", "general_service", "mirror_node", "port", "requires_tls", "rpc_relay", "type"],
}
REGISTERED_NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "created_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "description": {"type": ["string", "null"]},
        "registered_node_id": {"type": "integer", "format": "int64"},
        "service_endpoints": {"type": "array", "items": ENDPOINT_SCHEMA},
        "timestamp": schemas.TIMESTAMP_RANGE,
    },
    "required": [
        "admin_key",
        "created_timestamp",
        "description",
        "registered_node_id",
        "service_endpoints",
        "timestamp",
    ],
}

LIST = ListSpec[Request, tuple[int, int]](
    path="/api/v1/network/registered-nodes",
    items="registered_nodes",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=60,
    summary="List registered nodes",
    description="The network's registered nodes (block nodes, mirror nodes, RPC relays, general services) that "
    "are not deleted, in ascending id order by default, with pagination through links.next.",
    item_schema=REGISTERED_NODE,
    tag="network",
)
ENDPOINT = LIST.endpoint()
