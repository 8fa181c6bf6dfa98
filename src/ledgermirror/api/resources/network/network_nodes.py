"""``GET /api/v1/network/nodes``: the nodes of the latest address book, with their endpoints, stake and node state.

Two statements: the latest ``address_book`` row of the requested file (0.0.102 unless ``file.id`` says otherwise),
then its entries, each left-joined to the node's row of the latest staking period (``node_stake`` at its greatest
``consensus_timestamp``) and to ``node``, with the entry's service endpoints aggregated in a subquery.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, NothingMatches, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import (
    EQ_ONLY,
    RANGE_OPS,
    BadOperator,
    Op,
    Order,
    RawQuery,
    split_operator,
)
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import (
    Filter,
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.network.network_stake import staking_period
from ledgermirror.db.sql import Column, Select, Statement
from ledgermirror.ledger.entity_id import EntityId, EvmForm, format_encoded
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.system_files import NODE_DETAILS_FILE as ADDRESS_BOOK_NUM
from ledgermirror.ledger.timestamps import format_ns

_NODE_ID = re.compile(r"^\d{1,19}$", re.ASCII)


def node_id(text: str, ctx: ParseContext) -> int:
    """A node id: a non-negative 64-bit integer in decimal."""
    if not _NODE_ID.fullmatch(text) or int(text) > INT64_MAX:
        raise InvalidValue(text)
    return int(text)


FILE_ID = ParamSpec[EntityId](
    "file.id",
    values.numeric_entity_id(EvmForm.NONE),
    "The address book file: 0.0.102 (the default) or 0.0.101. One value, equality only.",
    ops=EQ_ONLY,
    single=True,
    schema=schemas.ENTITY_ID_QUERY,
    example="0.0.101",
)
NODE_ID = ParamSpec[int](
    "node.id",
    node_id,
    "Node id with an optional eq, gt, gte, lt or lte operator; repeat for ranges. Equalities are one list.",
    ops=RANGE_OPS,
    schema=schemas.INT64_QUERY,
    example="gte:3",
)


def _file_id_rules(raw: RawQuery) -> None:
    given = raw.items.get("file.id", [])
    if len(given) > 1:
        raise BadRequest("Only a single instance is supported for file.id")
    for text in given:
        try:
            op, _ = split_operator(text)
        except BadOperator:
            continue  # reported as an invalid value
        if op not in (None, Op.EQ):
            raise BadRequest("Only equality operator is supported for file.id")


PARAMS = ParamSet([FILE_ID, LIMIT, NODE_ID, ORDER], checks=[_file_id_rules])

_BOOK = """select start_consensus_timestamp, end_consensus_timestamp, file_id
from address_book"""
_BOOK_FILE = Column("file_id")
_BOOK_START = Column("start_consensus_timestamp")

_SELECT = """select e.node_id, e.description, e.memo, e.public_key, e.node_cert_hash,
    coalesce(n.account_id, e.node_account_id) as node_account_id,
    n.admin_key, n.decline_reward, n.grpc_proxy_endpoint::text as grpc_proxy_endpoint,
    n.associated_registered_nodes,
    s.node_id as stake_node_id, s.max_stake, s.min_stake, s.reward_rate, s.stake, s.stake_not_rewarded,
    s.stake_rewarded, s.staking_period,
    (select json_agg(json_build_object('domain_name', p.domain_name, 'ip_address_v4', p.ip_address_v4,
                                       'port', p.port) order by p.ip_address_v4, p.port)::text
     from address_book_service_endpoint p
     where p.consensus_timestamp = e.consensus_timestamp and p.node_id = e.node_id) as service_endpoints
from address_book_entry e
left join node_stake s
    on s.consensus_timestamp = (select max(consensus_timestamp) from node_stake) and s.node_id = e.node_id
left join node n on n.node_id = e.node_id"""

_BOOK_TIMESTAMP = Column("e.consensus_timestamp")
_ENTRY_NODE = Column("e.node_id")


def plan(book: Any, query: ParsedQuery, limit: int, order: Order) -> Select:
    """The nodes of the address book ``book`` (its row)."""
    select = Select(_SELECT).compare(_BOOK_TIMESTAMP, Op.EQ, book["start_consensus_timestamp"])
    lower, upper = node_range(query.filters(NODE_ID))
    equal = [item.value for item in query.filters(NODE_ID) if item.op is Op.EQ]
    if equal:
        inside = sorted({value for value in equal if lower <= value <= upper})
        if not inside:
            raise NothingMatches  # equalities that all fall outside the range
        select.any_of(_ENTRY_NODE, inside)
    if lower > 0:
        select.compare(_ENTRY_NODE, Op.GTE, lower)
    if upper < INT64_MAX:
        select.compare(_ENTRY_NODE, Op.LTE, upper)
    return select.order_by([_ENTRY_NODE], order).limit(limit)


def node_range(filters: list[Filter[int]]) -> tuple[int, int]:
    """The inclusive node id range of the gt/gte/lt/lte filters; an empty range is a 400."""
    lower, upper = inclusive_bounds(filters)
    if lower > upper:
        raise BadRequest("Invalid range provided for node.id")
    return lower, upper


def _hex_text(value: str | None) -> str:
    if not value:
        return "0x"
    return value if value.startswith("0x") else "0x" + value


def _endpoint(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "domain_name": item.get("domain_name") or "",
        "ip_address_v4": item.get("ip_address_v4") or "",
        "port": item.get("port"),
    }


def render(book: Any, row: Any) -> dict[str, Any]:
    staked = row["stake_node_id"] is not None
    proxy = row["grpc_proxy_endpoint"]
    endpoints = row["service_endpoints"]
    cert_hash = row["node_cert_hash"]

    def stake_field(name: str, *, unknown: int | None = None) -> int | None:
        value: int | None = row[name] if staked else None
        return None if value is not None and value == unknown else value

    return {
        "admin_key": render_key(row["admin_key"]),
        "associated_registered_nodes": list(row["associated_registered_nodes"] or []),
        "decline_reward": row["decline_reward"],
        "description": row["description"],
        "file_id": format_encoded(book["file_id"]),
        "grpc_proxy_endpoint": _endpoint(orjson.loads(proxy)) if proxy is not None else None,
        "max_stake": stake_field("max_stake", unknown=-1),
        "memo": row["memo"],
        "min_stake": stake_field("min_stake", unknown=-1),
        "node_account_id": format_encoded(row["node_account_id"]),
        "node_id": row["node_id"],
        "node_cert_hash": _hex_text(bytes(cert_hash).decode("utf-8", "replace") if cert_hash else None),
        "public_key": _hex_text(row["public_key"]),
        "reward_rate_start": stake_field("reward_rate"),
        "service_endpoints": [_endpoint(item) for item in orjson.loads(endpoints)] if endpoints else [],
        "stake": stake_field("stake"),
        "stake_not_rewarded": stake_field("stake_not_rewarded", unknown=-1),
        "stake_rewarded": stake_field("stake_rewarded"),
        "staking_period": staking_period(row["staking_period"]) if staked else None,
        "timestamp": {
            "from": format_ns(book["start_consensus_timestamp"]),
            "to": format_ns(book["end_consensus_timestamp"]),
        },
    }


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Any:
    node_range(query.filters(NODE_ID))  # an empty range is a 400 even when there is no address book
    file_id = query.last(FILE_ID, None)
    encoded = (
        file_id.encoded if file_id else EntityId(ctx.settings.shard, ctx.settings.realm, ADDRESS_BOOK_NUM).encoded
    )
    books = await ctx.database.fetch(plan_book(encoded))
    if not books:
        raise NothingMatches
    return books[0]


def plan_book(file_id: int) -> Statement:
    """The latest address book of the file."""
    select = Select(_BOOK).compare(_BOOK_FILE, Op.EQ, file_id)
    return select.order_by([_BOOK_START], Order.DESC).limit(1).build()


def _anchors(book: Any, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(NODE_ID.name, str(row["node_id"]), number=row["node_id"])]


_INT64_NULL = {"type": ["integer", "null"], "format": "int64"}
_TIMESTAMP = {"type": "string", "pattern": r"^\d{1,10}\.\d{9}$", "example": "1655164800.000000000"}
_TIMESTAMP_NULL = {"type": ["string", "null"], "pattern": r"^\d{1,10}\.\d{9}$"}
_ENDPOINT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "domain_name": {"type": "string"},
        "ip_address_v4": {"type": "string"},
        "port": {"type": ["integer", "null"], "format": "int32"},
    },
    "required": ["domain_name", "ip_address_v4", "port"],
}
NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "associated_registered_nodes": {"type": "array", "items": {"type": "integer", "format": "int64"}},
        "decline_reward": {"type": ["boolean", "null"]},
        "description": {"type": ["string", "null"]},
        "file_id": schemas.ENTITY_ID,
        "grpc_proxy_endpoint": {**_ENDPOINT, "type": ["object", "null"]},
        "max_stake": _INT64_NULL,
        "memo": {"type": ["string", "null"]},
        "min_stake": _INT64_NULL,
        "node_account_id": schemas.ENTITY_ID,
        "node_id": {"type": "integer", "format": "int64"},
        "node_cert_hash": {"type": "string", "description": "0x and the certificate hash text; 0x when none"},
        "public_key": {"type": "string", "description": "0x and the hex RSA public key; 0x when none"},
        "reward_rate_start": _INT64_NULL,
        "service_endpoints": {"type": "array", "items": _ENDPOINT},
        "stake": _INT64_NULL,
        "stake_not_rewarded": _INT64_NULL,
        "stake_rewarded": _INT64_NULL,
        "staking_period": {
            "type": ["object", "null"],
            "properties": {"from": _TIMESTAMP, "to": _TIMESTAMP},
            "required": ["from", "to"],
        },
        "timestamp": {
            "type": "object",
            "properties": {"from": _TIMESTAMP, "to": _TIMESTAMP_NULL},
            "required": ["from", "to"],
        },
    },
}
NODE["required"] = list(NODE["properties"])

LIST = ListSpec[Request, Any](
    path="/api/v1/network/nodes",
    items="nodes",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render_with=render,
    anchors=_anchors,
    max_age=60,
    summary="Get the network address book nodes",
    description="The nodes of the latest address book in ascending node id order by default, with their "
    "service endpoints, the latest staking period's stake and the node's own settings.",
    item_schema=NODE,
    tag="network",
)
ENDPOINT = LIST.endpoint()
