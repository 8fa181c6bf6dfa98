"""``GET /api/v1/schedules`` and ``GET /api/v1/schedules/{scheduleId}``: scheduled transactions.

A schedule is its ``schedule`` row, the memo, key and deleted flag of its entity (a schedule without an
entity row has no ``deleted`` or ``memo`` key, as in the reference) and its signatures from
``transaction_signature`` in consensus order. A signature's ``public_key_prefix`` and ``signature`` are base64 as
the reference writes them (PostgreSQL's ``encode(..., 'base64')``: a newline after every 76 characters, so a
64-byte signature has one), or plain base64 with ``schedule_signature_plain_base64``. The list is ordered by
schedule id, ascending by default, and pages on ``schedule.id``. One schedule is cached for an hour once it
can no longer change (executed, deleted or expired), else for a second.
"""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmForm, InvalidEntityId, format_encoded, parse_entity_ref
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

ACCOUNT_ID = ParamSpec[EntityId](
    "account.id",
    values.numeric_entity_id(),
    "The account that created the schedule, with an optional operator; repeat for ranges (every value is "
    "its own condition).",
    schema=schemas.ENTITY_ID_QUERY,
    example="0.0.1024",
)
SCHEDULE_ID = ParamSpec[EntityId](
    "schedule.id",
    values.numeric_entity_id(EvmForm.NONE),
    "The schedule's id, with an optional operator; repeat for ranges (every value is its own condition).",
    schema=schemas.ENTITY_ID_QUERY,
    example="gt:0.0.2000",
)
PARAMS = ParamSet([ACCOUNT_ID, LIMIT, ORDER, SCHEDULE_ID])
NO_PARAMS = ParamSet([])

PATH_PARAMETER = "scheduleId"
INVALID_SCHEDULE_ID = "Invalid parameter: scheduleid"

_SELECT = """select s.consensus_timestamp, s.creator_account_id, s.executed_timestamp, s.expiration_time,
       s.payer_account_id, s.schedule_id, s.transaction_body, s.wait_for_expiry,
       e.id as entity_id, e.deleted, e.key, e.memo,
       sig.timestamps, sig.prefixes, sig.signatures, sig.types
from schedule s
left join entity e on e.id = s.schedule_id
left join lateral (
    select array_agg(ts.consensus_timestamp order by ts.consensus_timestamp) as timestamps,
           array_agg(ts.public_key_prefix order by ts.consensus_timestamp) as prefixes,
           array_agg(ts.signature order by ts.consensus_timestamp) as signatures,
           array_agg(ts.type order by ts.consensus_timestamp) as types
    from transaction_signature ts
    where ts.entity_id = s.schedule_id
) sig on true"""
_SCHEDULE_ID = Column("s.schedule_id")
_CREATOR = Column("s.creator_account_id")

SIGNATURE_TYPES = {2: "CONTRACT", 3: "ED25519", 4: "RSA_3072", 5: "ECDSA_384", 6: "ECDSA_SECP256K1"}
FINAL_MAX_AGE = 3600
IMPLICIT_EXPIRY_NS = 31 * 60 * 1_000_000_000
"""A schedule without an expiration time expires this long after its creation."""
EXPIRY_GRACE_NS = 60 * 1_000_000_000

_NULLABLE_TIMESTAMP: dict[str, Any] = {"type": ["string", "null"], "example": "1234567890.000000001"}
SCHEDULE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "deleted": {"type": "boolean"},
        "consensus_timestamp": {"type": "string", "example": "1234567890.000000001"},
        "creator_account_id": schemas.ENTITY_ID,
        "executed_timestamp": _NULLABLE_TIMESTAMP,
        "expiration_time": _NULLABLE_TIMESTAMP,
        "memo": {"type": "string"},
        "payer_account_id": schemas.ENTITY_ID,
        "schedule_id": schemas.ENTITY_ID,
        "signatures": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "consensus_timestamp": {"type": "string"},
                    "public_key_prefix": {"type": "string", "format": "byte"},
                    "signature": {"type": "string", "format": "byte"},
                    "type": {"type": "string", "enum": [*SIGNATURE_TYPES.values(), "UNKNOWN"]},
                },
                "required": ["consensus_timestamp", "public_key_prefix", "signature", "type"],
            },
        },
        "transaction_body": {"type": "string", "format": "byte"},
        "wait_for_expiry": {"type": "boolean"},
    },
    "required": [
        "admin_key",
        "consensus_timestamp",
        "creator_account_id",
        "executed_timestamp",
        "expiration_time",
        "payer_account_id",
        "schedule_id",
        "signatures",
        "transaction_body",
        "wait_for_expiry",
    ],
}


PG_BASE64_LINE_BYTES = 57
"""PostgreSQL's ``encode(..., 'base64')`` ends a line after every 76 characters: 57 bytes of input."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def pg_base64(data: bytes) -> str:
    """``encode(data, 'base64')`` as PostgreSQL writes it: a newline after every full line of 76 characters,
    also after the last one when the input fills it exactly."""
    whole = len(data) - len(data) % PG_BASE64_LINE_BYTES
    lines = [
        _b64(data[start : start + PG_BASE64_LINE_BYTES]) + "\n" for start in range(0, whole, PG_BASE64_LINE_BYTES)
    ]
    return "".join(lines) + _b64(data[whole:])


def _signatures(row: Any, plain: bool) -> list[dict[str, Any]]:
    if row["timestamps"] is None:
        return []
    encode = _b64 if plain else pg_base64
    return [
        {
            "consensus_timestamp": format_ns(timestamp),
            "public_key_prefix": encode(prefix),
            "signature": encode(signature),
            "type": SIGNATURE_TYPES.get(kind, "UNKNOWN"),
        }
        for timestamp, prefix, signature, kind in zip(
            row["timestamps"], row["prefixes"], row["signatures"], row["types"], strict=True
        )
    ]


def render(row: Any, *, plain_signatures: bool = False) -> dict[str, Any]:
    has_entity = row["entity_id"] is not None
    body: dict[str, Any] = {"admin_key": render_key(row["key"])}
    if has_entity:
        body["deleted"] = row["deleted"]
    body |= {
        "consensus_timestamp": format_ns(row["consensus_timestamp"]),
        "creator_account_id": format_encoded(row["creator_account_id"]),
        "executed_timestamp": format_ns(row["executed_timestamp"]),
        "expiration_time": format_ns(row["expiration_time"]),
    }
    if has_entity:
        body["memo"] = row["memo"]
    return body | {
        "payer_account_id": format_encoded(row["payer_account_id"]),
        "schedule_id": format_encoded(row["schedule_id"]),
        "signatures": _signatures(row, plain_signatures),
        "transaction_body": _b64(row["transaction_body"]),
        "wait_for_expiry": row["wait_for_expiry"],
    }


def is_final(row: Any, now_ns: int) -> bool:
    """Executed, deleted or expired (explicitly, or 31 minutes after creation without an expiration time)."""
    if row["executed_timestamp"] is not None or row["deleted"]:
        return True
    expiration = row["expiration_time"]
    if expiration is None:
        return bool(now_ns >= row["consensus_timestamp"] + IMPLICIT_EXPIRY_NS)
    return bool(now_ns >= expiration + EXPIRY_GRACE_NS)


async def _prepare(located: Request, query: ParsedQuery, ctx: AppContext) -> bool:
    """Whether signatures are written in plain base64 (the setting)."""
    return ctx.settings.schedule_signature_plain_base64


def _render(plain: bool, row: Any) -> dict[str, Any]:
    return render(row, plain_signatures=plain)


def plan(plain: bool, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(_SELECT)
    for item in query.filters(ACCOUNT_ID):
        select.compare(_CREATOR, item.op, item.value.encoded)
    for item in query.filters(SCHEDULE_ID):
        select.compare(_SCHEDULE_ID, item.op, item.value.encoded)
    return select.order_by([_SCHEDULE_ID], order).limit(limit)


def _anchors(plain: bool, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    schedule_id = row["schedule_id"]
    return [Anchor(SCHEDULE_ID.name, format_encoded(schedule_id) or "", number=schedule_id)]


LIST = ListSpec[Request, bool](
    path="/api/v1/schedules",
    items="schedules",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render_with=_render,
    anchors=_anchors,
    max_age=10,
    summary="List schedules",
    description="Scheduled transactions by schedule id, ascending by default, with their signatures; "
    "filtered by creator account and schedule id, with pagination on schedule.id through links.next.",
    item_schema=SCHEDULE_SCHEMA,
    tag="schedules",
)
LIST_ENDPOINT = LIST.endpoint()


async def get_schedule(request: Request, ctx: AppContext) -> Page:
    text = request.path_params[PATH_PARAMETER]
    try:
        parsed = parse_entity_ref(text, shard=ctx.settings.shard, realm=ctx.settings.realm, evm=EvmForm.NONE)
    except InvalidEntityId:
        raise BadRequest(INVALID_SCHEDULE_ID) from None
    if not isinstance(parsed, EntityId):
        raise BadRequest(INVALID_SCHEDULE_ID)
    query_of(request, ctx, NO_PARAMS)
    rows = await ctx.database.fetch(Select(_SELECT).compare(_SCHEDULE_ID, Op.EQ, parsed.encoded).limit(2).build())
    if len(rows) != 1:
        raise NotFound()
    row = rows[0]
    plain = ctx.settings.schedule_signature_plain_base64
    return Page(
        render(row, plain_signatures=plain), max_age=FINAL_MAX_AGE if is_final(row, ctx.clock.now_ns()) else None
    )


ONE_ENDPOINT = Endpoint(
    path="/api/v1/schedules/{scheduleId}",
    handler=get_schedule,
    params=NO_PARAMS,
    max_age=1,
    summary="Get a schedule",
    description="One scheduled transaction by its id, with its signatures. Cached for an hour once it can no "
    "longer change (executed, deleted or expired), else for a second.",
    response_schema=SCHEDULE_SCHEMA,
    tag="schedules",
    path_params=(
        {
            "name": PATH_PARAMETER,
            "in": "path",
            "required": True,
            "description": "The schedule's id: shard.realm.num, realm.num or num",
            "schema": {"type": "string", "pattern": f"^{schemas.ENTITY_ID_VALUE}$"},
            "example": "0.0.2000",
        },
    ),
)
