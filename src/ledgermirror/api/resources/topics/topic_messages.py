"""The topic message routes: ``GET /api/v1/topics/{topicId}/messages`` (a list),
``/topics/{topicId}/messages/{sequenceNumber}`` and ``/topics/messages/{timestamp}``.

The list is ordered by consensus timestamp, oldest first by default, and pages on ``timestamp``. The topic's
existence is not checked (an unknown topic has no messages). With ``topic_message_lookup`` on, the filters
are first folded into a sequence and a timestamp range and matched against ``topic_message_lookup``
(:mod:`.topic_message_lookup`); ``ne`` is then refused, as the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.topics import topic_message_lookup
from ledgermirror.api.resources.topics import topic_message_render as message
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmForm, InvalidEntityId, parse_entity_ref
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.protobuf import preload
from ledgermirror.ledger.timestamps import InvalidTimestamp, format_ns, parse_timestamp
from ledgermirror.ledger.transaction_codes import SUCCESS, type_number

CONSENSUS_SUBMIT_MESSAGE = type_number("CONSENSUSSUBMITMESSAGE")

ENCODING = ParamSpec[bool](
    "encoding",
    lambda text, ctx: _utf8(text),
    "How to show each message: base64 (the default) or utf-8 (the bytes as text).",
    ops=frozenset(),
    single=True,
    schema={"type": "string", "enum": ["base64", "utf-8", "utf8", "BASE64", "UTF-8", "UTF8"]},
    example="utf-8",
)
SEQUENCE_NUMBER = ParamSpec[int](
    "sequencenumber",
    values.integer_between(1),
    "The message's sequence number (from 1), with an optional operator (eq, ne, gt, gte, lt, lte; ne is "
    "refused when the lookup table is in use). Repeat for ranges.",
    schema=schemas.POSITIVE_INT64_QUERY,
    example="gt:2",
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The message's consensus timestamp (seconds[.nanoseconds]), with an optional operator (eq, ne, gt, gte, "
    "lt, lte). Repeat for ranges.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1234567890.000000001",
)

PARAMS = ParamSet([ENCODING, LIMIT, ORDER, SEQUENCE_NUMBER, TIMESTAMP])
NO_PARAMS = ParamSet([])

TOPIC_ID_PATH = "topicId"
SEQUENCE_PATH = "sequenceNumber"
TIMESTAMP_PATH = "timestamp"
INVALID_TOPIC = "Invalid parameter: topic.id"
INVALID_SEQUENCE = "Invalid parameter: sequencenumber"
INVALID_TIMESTAMP = "Invalid parameter: consensus_timestamp"

_TOPIC = Column("topic_id")
_SEQUENCE = Column("sequence_number")
_TIMESTAMP = Column("consensus_timestamp")
_SUBMITTED = """select entity_id
from transaction"""
_RESULT = Column("result")
_TYPE = Column("type")

TOPIC_ID_PARAMETER: dict[str, Any] = {
    "name": TOPIC_ID_PATH,
    "in": "path",
    "required": True,
    "description": "The topic's id: shard.realm.num, realm.num or num",
    "schema": {"type": "string", "pattern": f"^{schemas.ENTITY_ID_VALUE}$"},
    "example": "0.0.7",
}


def _utf8(text: str) -> bool:
    lowered = text.lower()
    if lowered == "base64":
        return False
    if lowered in ("utf-8", "utf8"):
        return True
    raise InvalidValue(text)


def parse_topic_id(text: str, ctx: ParseContext) -> int | None:
    """The encoded topic id of a path segment; None when it is not an entity id (EVM addresses neither)."""
    try:
        parsed = parse_entity_ref(text, shard=ctx.shard, realm=ctx.realm, evm=EvmForm.NONE)
    except InvalidEntityId:
        return None
    return parsed.encoded if isinstance(parsed, EntityId) else None


def parse_sequence_number(text: str) -> int | None:
    try:
        return values.integer_between(1)(text, ParseContext())
    except InvalidValue:
        return None


@dataclass(frozen=True, slots=True)
class Scope:
    topic_id: int
    utf8: bool
    window: tuple[int, int] | None = None
    """``[from, to)`` of consensus timestamps from the lookup table (lookup mode only)."""


def _apply(select: Select, column: Column, query: ParsedQuery, spec: ParamSpec[int]) -> None:
    for item in query.filters(spec):
        select.compare(column, item.op, item.value)


def plan(scope: Scope, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select(message.SELECT).compare(_TOPIC, Op.EQ, scope.topic_id)
    _apply(select, _SEQUENCE, query, SEQUENCE_NUMBER)
    _apply(select, _TIMESTAMP, query, TIMESTAMP)
    if scope.window is not None:
        select.compare(_TIMESTAMP, Op.GTE, scope.window[0]).compare(_TIMESTAMP, Op.LT, scope.window[1])
    return select.order_by([_TIMESTAMP], order).limit(limit)


async def _locate(request: Request, ctx: AppContext) -> int:
    topic_id = parse_topic_id(request.path_params[TOPIC_ID_PATH], ctx.parse_ctx)
    if topic_id is None:
        raise BadRequest(INVALID_TOPIC)
    return topic_id


async def _prepare(topic_id: int, query: ParsedQuery, ctx: AppContext) -> Scope:
    utf8 = bool(query.last(ENCODING, False))
    await preload()
    if not ctx.settings.topic_message_lookup:
        return Scope(topic_id, utf8)
    for spec in (SEQUENCE_NUMBER, TIMESTAMP):
        if any(item.op is Op.NE for item in query.filters(spec)):
            raise BadRequest(f"Not equal (ne) operator is not supported for {spec.name}")
    sequences = topic_message_lookup.fold(query.filters(SEQUENCE_NUMBER), 1, INT64_MAX - 1)
    timestamps = topic_message_lookup.fold(query.filters(TIMESTAMP), 0, INT64_MAX - 1)
    if sequences is None or timestamps is None:
        raise NothingMatches()
    window = await topic_message_lookup.window(ctx.database, topic_id, sequences, timestamps)
    if window is None:
        raise NothingMatches()
    return Scope(topic_id, utf8, window)


def _render(scope: Scope, row: Any) -> dict[str, Any]:
    return message.render(row, utf8=scope.utf8)


def _anchors(scope: Scope, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    timestamp = row["consensus_timestamp"]
    return [Anchor(TIMESTAMP.name, format_ns(timestamp) or "", number=timestamp)]


LIST = ListSpec[int, Scope](
    path="/api/v1/topics/{topicId}/messages",
    items="messages",
    params=PARAMS,
    default_order=Order.ASC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render_with=_render,
    anchors=_anchors,
    max_age=1,
    summary="List a topic's messages",
    description="The messages of a consensus topic in consensus order, oldest first by default, filtered by "
    "sequence number and timestamp, with pagination on timestamp through links.next. A topic without "
    "messages (or unknown) gives an empty list.",
    item_schema=message.MESSAGE_SCHEMA,
    tag="topics",
    path_params=(TOPIC_ID_PARAMETER,),
)
LIST_ENDPOINT = LIST.endpoint()


async def _one(ctx: AppContext, select: Select) -> Page:
    rows = await ctx.database.fetch(select.limit(2).build())
    if len(rows) != 1:
        raise NotFound()
    await preload()
    return Page(message.render(rows[0]))


async def get_by_sequence(request: Request, ctx: AppContext) -> Page:
    topic_id = parse_topic_id(request.path_params[TOPIC_ID_PATH], ctx.parse_ctx)
    sequence = parse_sequence_number(request.path_params[SEQUENCE_PATH])
    problems = ([INVALID_TOPIC] if topic_id is None else []) + ([INVALID_SEQUENCE] if sequence is None else [])
    if problems:
        raise BadRequest(*problems)
    assert topic_id is not None and sequence is not None
    query_of(request, ctx, NO_PARAMS)
    select = Select(message.SELECT).compare(_TOPIC, Op.EQ, topic_id).compare(_SEQUENCE, Op.EQ, sequence)
    if ctx.settings.topic_message_lookup:
        window = await topic_message_lookup.window_of(ctx.database, topic_id, sequence)
        if window is None:
            raise NotFound()
        select.compare(_TIMESTAMP, Op.GTE, window[0]).compare(_TIMESTAMP, Op.LT, window[1])
    return await _one(ctx, select)


async def get_by_timestamp(request: Request, ctx: AppContext) -> Page:
    try:
        timestamp = parse_timestamp(request.path_params[TIMESTAMP_PATH])
    except InvalidTimestamp:
        raise BadRequest(INVALID_TIMESTAMP) from None
    query_of(request, ctx, NO_PARAMS)
    submitted = (
        Select(_SUBMITTED)
        .compare(_TIMESTAMP, Op.EQ, timestamp)
        .compare(_RESULT, Op.EQ, SUCCESS)
        .compare(_TYPE, Op.EQ, CONSENSUS_SUBMIT_MESSAGE)
        .limit(2)
    )
    found = await ctx.database.fetch(submitted.build())
    if len(found) != 1 or found[0]["entity_id"] is None:
        raise NotFound()
    select = Select(message.SELECT).compare(_TOPIC, Op.EQ, found[0]["entity_id"])
    return await _one(ctx, select.compare(_TIMESTAMP, Op.EQ, timestamp))


BY_SEQUENCE_ENDPOINT = Endpoint(
    path="/api/v1/topics/{topicId}/messages/{sequenceNumber}",
    handler=get_by_sequence,
    params=NO_PARAMS,
    max_age=600,
    summary="Get a topic message by sequence number",
    description="One message of a topic by its sequence number (from 1); 404 when the topic has no such message.",
    response_schema=message.MESSAGE_SCHEMA,
    tag="topics",
    path_params=(
        TOPIC_ID_PARAMETER,
        {
            "name": SEQUENCE_PATH,
            "in": "path",
            "required": True,
            "description": "The message's sequence number (from 1)",
            "schema": {"type": "string", "pattern": f"^{schemas.POSITIVE_INT64_VALUE}$"},
            "example": "2",
        },
    ),
)

BY_TIMESTAMP_ENDPOINT = Endpoint(
    path="/api/v1/topics/messages/{timestamp}",
    handler=get_by_timestamp,
    params=NO_PARAMS,
    max_age=600,
    summary="Get a topic message by consensus timestamp",
    description="The message submitted by the successful ConsensusSubmitMessage transaction at this "
    "consensus timestamp (seconds[.nanoseconds]); 404 when there is none.",
    response_schema=message.MESSAGE_SCHEMA,
    tag="topics",
    path_params=(
        {
            "name": TIMESTAMP_PATH,
            "in": "path",
            "required": True,
            "description": "The consensus timestamp, seconds[.nanoseconds]",
            "schema": {"type": "string", "pattern": f"^{schemas.TIMESTAMP_VALUE}$"},
            "example": "1234567890.000000002",
        },
    ),
)
