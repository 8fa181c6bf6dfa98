"""``GET /api/v1/topics/{topicId}``: one consensus topic (the reference serves it from its Java service).

The topic's keys come from ``topic``, its memo, auto-renew settings, deleted flag and validity from
``entity``, its fixed fees from ``custom_fee``: current rows only, each required (a 404 names the one that is
missing, as the reference does). Query parameters are ignored, as in the reference. Errors are in our one
error style (the Node service's), see docs/compatibility.md.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.topics.topic_messages import TOPIC_ID_PARAMETER, TOPIC_ID_PATH, parse_topic_id
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.protobuf import hapi, preload
from ledgermirror.ledger.timestamps import format_ns

INVALID_TOPIC_ID = "Invalid parameter: topicId"
IGNORED_PARAMS = ParamSet([])

_SELECT = """select t.id as topic, t.admin_key, t.fee_exempt_key_list, t.fee_schedule_key, t.submit_key,
       e.id as entity, e.auto_renew_account_id, e.auto_renew_period, e.created_timestamp, e.deleted, e.memo,
       lower(e.timestamp_range) as valid_from, upper(e.timestamp_range) as valid_to,
       cf.entity_id as fees, cf.fixed_fees, lower(cf.timestamp_range) as fees_from
from topic t
left join entity e on e.id = t.id
left join custom_fee cf on cf.entity_id = t.id"""
_ID = Column("t.id")

_FIXED_FEE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "format": "int64"},
        "collector_account_id": schemas.ENTITY_ID,
        "denominating_token_id": schemas.ENTITY_ID,
    },
    "required": ["amount", "collector_account_id", "denominating_token_id"],
}
TOPIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "auto_renew_account": schemas.ENTITY_ID,
        "auto_renew_period": {"type": ["integer", "null"], "format": "int64"},
        "created_timestamp": {"type": ["string", "null"]},
        "custom_fees": {
            "type": "object",
            "properties": {
                "created_timestamp": {"type": ["string", "null"]},
                "fixed_fees": {"type": "array", "items": _FIXED_FEE},
            },
            "required": ["created_timestamp", "fixed_fees"],
        },
        "deleted": {"type": ["boolean", "null"]},
        "fee_exempt_key_list": {"type": "array", "items": schemas.KEY},
        "fee_schedule_key": schemas.KEY,
        "memo": {"type": ["string", "null"]},
        "submit_key": schemas.KEY,
        "timestamp": schemas.TIMESTAMP_RANGE,
        "topic_id": schemas.ENTITY_ID,
    },
    "required": [
        "admin_key",
        "auto_renew_account",
        "auto_renew_period",
        "created_timestamp",
        "custom_fees",
        "deleted",
        "fee_exempt_key_list",
        "fee_schedule_key",
        "memo",
        "submit_key",
        "timestamp",
        "topic_id",
    ],
}


def java_timestamp(value: int | None) -> str | None:
    """The Java service's form: as ours, except 0, which it writes ``0.0``."""
    return "0.0" if value == 0 else format_ns(value)


def _fee_exempt_keys(raw: bytes | None) -> list[Any]:
    if not raw:
        return []
    classes = hapi()
    try:
        key_list = classes.KeyList.FromString(raw)
    except classes.DecodeError:
        return []
    return [render_key(key.SerializeToString()) for key in key_list.keys]


def _fixed_fees(raw: Any) -> list[dict[str, Any]]:
    fees = orjson.loads(raw) if isinstance(raw, (str, bytes)) else raw
    return [
        {
            "amount": fee.get("amount"),
            "collector_account_id": format_encoded(fee.get("collector_account_id")),
            "denominating_token_id": format_encoded(fee.get("denominating_token_id")),
        }
        for fee in fees or []
    ]


def render(row: Any) -> dict[str, Any]:
    return {
        "admin_key": render_key(row["admin_key"]),
        "auto_renew_account": format_encoded(row["auto_renew_account_id"]),
        "auto_renew_period": row["auto_renew_period"],
        "created_timestamp": java_timestamp(row["created_timestamp"]),
        "custom_fees": {
            "created_timestamp": java_timestamp(row["fees_from"]),
            "fixed_fees": _fixed_fees(row["fixed_fees"]),
        },
        "deleted": row["deleted"],
        "fee_exempt_key_list": _fee_exempt_keys(row["fee_exempt_key_list"]),
        "fee_schedule_key": render_key(row["fee_schedule_key"]),
        "memo": row["memo"],
        "submit_key": render_key(row["submit_key"]),
        "timestamp": {"from": java_timestamp(row["valid_from"]), "to": java_timestamp(row["valid_to"])},
        "topic_id": format_encoded(row["entity"]),
    }


async def get_topic(request: Request, ctx: AppContext) -> Page:
    topic_id = parse_topic_id(request.path_params[TOPIC_ID_PATH], ctx.parse_ctx)
    if topic_id is None:
        raise BadRequest(INVALID_TOPIC_ID)
    rows = await ctx.database.fetch(Select(_SELECT).compare(_ID, Op.EQ, topic_id).limit(1).build())
    if not rows:
        raise NotFound(detail="Topic not found")
    row = rows[0]
    if row["entity"] is None:
        raise NotFound(detail="Entity not found")
    if row["fees"] is None:
        raise NotFound(detail="Custom fee for entity not found")
    await preload()
    return Page(render(row))


ENDPOINT = Endpoint(
    path="/api/v1/topics/{topicId}",
    handler=get_topic,
    params=IGNORED_PARAMS,
    max_age=5,
    summary="Get a topic",
    description="One consensus topic: its keys, memo, auto-renew settings, fixed custom fees and fee-exempt "
    "keys. 404 when the topic, its entity or its fee schedule is missing.",
    response_schema=TOPIC_SCHEMA,
    tag="topics",
    path_params=(TOPIC_ID_PARAMETER,),
)
