"""``POST /api/v1/network/fees``: an itemized fee estimate (tinycents) for a protobuf ``Transaction``.

The request is ``Content-Type: application/protobuf`` (or ``application/x-protobuf``) with the raw bytes of a
HAPI ``Transaction`` (at most 6 KiB, the network's transaction size limit), and the query parameters ``mode``
(``INTRINSIC`` or ``STATE``, any case; default ``INTRINSIC``) and ``high_volume_throttle`` (0..10000 basis
points; default 0). The arithmetic lives in :mod:`ledgermirror.fees`; this module reads the request, the fee
schedule (file 0.0.113, cached per app and reloaded when ``file_data`` has a newer row for the file; the
shipped default when there is none that decodes) and, in STATE mode, the custom fees of the involved tokens
and topic and the tokens' types. ``X-Fee-Schedule`` names the schedule used: ``0.0.113@<seconds.nanos>``
or ``default``.
The ``GET`` on the same path (``network_fees.py``) is unrelated.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext
from ledgermirror.api.resources.network import system_files
from ledgermirror.db.sql import Column, Op, Select, template
from ledgermirror.fees import schedule as schedules
from ledgermirror.fees import usage
from ledgermirror.fees.calculator import calculate
from ledgermirror.fees.curve import MAX_UTILIZATION
from ledgermirror.fees.notes import notes as fee_notes
from ledgermirror.fees.schedule import FeeSchedule, UndecodableSchedule
from ledgermirror.fees.transaction import ParsedTransaction, TransactionError, parse
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId
from ledgermirror.ledger.system_files import SIMPLE_FEE_SCHEDULE_FILE, Undecodable
from ledgermirror.ledger.timestamps import format_ns

_log = logging.getLogger(__name__)

PATH = "/api/v1/network/fees"
MAX_BODY_BYTES = 6144
CONTENT_TYPES = frozenset({"application/protobuf", "application/x-protobuf"})
MODES = frozenset({"INTRINSIC", "STATE"})
SCHEDULE_HEADER = "x-fee-schedule"
_INT = re.compile(r"[+-]?\d{1,10}")
_INT32_MAX = (1 << 31) - 1

# The newest row of the file: one backward step on file_data's (entity_id, consensus_timestamp) index.
_LATEST = "select max(consensus_timestamp) as latest from file_data"
_FILE_ENTITY = Column("entity_id")

# STATE facts of the involved tokens and topic: which have custom fees (primary-key lookups on custom_fee) and
# which tokens are non-fungible (primary-key lookups on token).
_STATE = """select c.entity_id as id, true as custom, false as non_fungible
from custom_fee c
where c.entity_id = any({entities}::bigint[]) and (
       case when jsonb_typeof(c.fixed_fees) = 'array' then jsonb_array_length(c.fixed_fees) else 0 end
     + case when jsonb_typeof(c.fractional_fees) = 'array' then jsonb_array_length(c.fractional_fees) else 0 end
     + case when jsonb_typeof(c.royalty_fees) = 'array' then jsonb_array_length(c.royalty_fees) else 0 end) > 0
union all
select token_id, false, true
from token
where token_id = any({tokens}::bigint[]) and type = 'NON_FUNGIBLE_UNIQUE'"""


# The involved tokens and topic the database knows (the described form's notes name the others).
_KNOWN = """select token_id as id from token where token_id = any({tokens}::bigint[])
union all
select id from entity where id = any({topics}::bigint[]) and type = 'TOPIC'"""


@dataclass(frozen=True, slots=True)
class Query:
    state: bool
    throttle: int


def _throttle(text: str, ctx: ParseContext) -> int:
    if not _INT.fullmatch(text) or abs(int(text)) > _INT32_MAX:
        raise InvalidValue(text)
    return int(text)


MODE = ParamSpec(
    "mode",
    values.choice(*sorted(MODES)),
    "INTRINSIC prices the transaction alone; STATE also reads custom fees of its tokens and topic. Any case.",
    ops=frozenset(),
    single=True,
    schema={"type": "string", "enum": sorted(MODES), "default": "INTRINSIC"},
)
HIGH_VOLUME_THROTTLE = ParamSpec(
    "high_volume_throttle",
    _throttle,
    "High-volume throttle utilization in basis points (0..10000); 0 means no high-volume pricing.",
    ops=frozenset(),
    single=True,
    schema={"type": "integer", "minimum": 0, "maximum": MAX_UTILIZATION, "default": 0},
)
PARAMS = ParamSet([HIGH_VOLUME_THROTTLE, MODE])


def parse_query(query_string: str, ctx: ParseContext) -> Query:
    """``mode`` and ``high_volume_throttle`` (names case-insensitive, each at most once), or one 400."""
    query = PARAMS.parse(query_string, ctx)
    throttle = query.last(HIGH_VOLUME_THROTTLE, 0)
    if throttle < 0:
        raise BadRequest("high_volume_throttle must be greater than or equal to 0")
    if throttle > MAX_UTILIZATION:
        raise BadRequest(f"high_volume_throttle must be less than or equal to {MAX_UTILIZATION}")
    return Query(state=query.last(MODE, "INTRINSIC") == "STATE", throttle=throttle)


def check_content_type(header: str | None) -> None:
    media_type = (header or "").split(";", 1)[0].strip().lower()
    if media_type not in CONTENT_TYPES:
        raise UnsupportedMediaType(f"Content-Type '{header or ''}' is not supported")


async def read_body(request: Request) -> bytes:
    """The body, at most :data:`MAX_BODY_BYTES` (else 413), not empty (else 400)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"Request body exceeds {MAX_BODY_BYTES} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise PayloadTooLarge(f"Request body exceeds {MAX_BODY_BYTES} bytes")
    if not body:
        raise BadRequest("Request body is empty: expected the bytes of a Transaction")
    return bytes(body)


@dataclass(frozen=True, slots=True)
class CachedSchedule:
    """A decoded schedule and the newest ``file_data`` row of its file when it was decoded."""

    latest: int | None
    schedule: FeeSchedule


SCHEDULE_TTL_SECONDS = 3600.0
"""How long a decoded schedule is kept at most; it is dropped sooner when the file has a newer row."""


def _decode(data: bytes) -> FeeSchedule:
    try:
        return schedules.decode(data, source="")
    except UndecodableSchedule as error:
        raise Undecodable(str(error)) from None


async def fee_schedule(ctx: AppContext) -> FeeSchedule:
    """The schedule from the newest decodable version of 0.0.113, else the default; cached per app and file
    (``ctx.fee_schedules``) until ``file_data`` has a newer row for the file."""
    entity = system_files.file_entity(ctx, SIMPLE_FEE_SCHEDULE_FILE)
    found = await ctx.database.fetch(Select(_LATEST).compare(_FILE_ENTITY, Op.EQ, entity.encoded).build())
    latest = None if found[0]["latest"] is None else int(found[0]["latest"])
    key = str(entity.encoded)
    cached = ctx.fee_schedules.get(key)
    if isinstance(cached, CachedSchedule) and cached.latest == latest:
        return cached.schedule
    schedule = schedules.default()
    if latest is not None:
        loaded = await system_files.load(ctx, SIMPLE_FEE_SCHEDULE_FILE, system_files.Window(), _decode)
        if loaded is not None:
            source = f"{entity}@{format_ns(loaded.timestamp)}"
            schedule = dataclasses.replace(loaded.content, source=source)
    ctx.fee_schedules.put(key, CachedSchedule(latest, schedule), SCHEDULE_TTL_SECONDS)
    return schedule


def _encoded(ids: list[tuple[int, int, int]]) -> dict[int, tuple[int, int, int]]:
    encoded = {}
    for shard, realm, num in ids:
        try:
            encoded[EntityId(shard, realm, num).encoded] = (shard, realm, num)
        except InvalidEntityId:
            continue  # no such entity can exist, so it has no custom fees
    return encoded


async def read_state(ctx: AppContext, parsed: ParsedTransaction) -> usage.State:
    """Which of the transaction's tokens and topic have custom fees, and which tokens are non-fungible (one
    indexed query, or none)."""
    tokens = _encoded(usage.token_ids(parsed.body))
    topic = usage.topic_id(parsed.body)
    topics = _encoded([topic] if topic is not None else [])
    wanted = sorted({*tokens, *topics})
    if not wanted:
        return usage.State()
    rows = await ctx.database.fetch(template(_STATE, entities=wanted, tokens=sorted(tokens)))
    with_fees = {int(row["id"]) for row in rows if row["custom"]}
    non_fungible = {int(row["id"]) for row in rows if row["non_fungible"]}
    return usage.State(
        tokens_with_custom_fees=frozenset(tokens[key] for key in with_fees if key in tokens),
        non_fungible_tokens=frozenset(tokens[key] for key in non_fungible if key in tokens),
        topics_with_custom_fees=frozenset(topics[key] for key in with_fees if key in topics),
    )


async def unknown_entities(ctx: AppContext, parsed: ParsedTransaction) -> set[tuple[int, int, int]]:
    """The involved tokens and topic that the database does not have (one query, or none)."""
    topic = usage.topic_id(parsed.body)
    involved = {*usage.token_ids(parsed.body), *([topic] if topic is not None else [])}
    if not involved:
        return set()
    tokens = _encoded(usage.token_ids(parsed.body))
    topics = _encoded([topic] if topic is not None else [])
    rows = await ctx.database.fetch(template(_KNOWN, tokens=sorted(tokens), topics=sorted(topics)))
    known = {(tokens | topics)[int(row["id"])] for row in rows}
    return involved - known


async def described(ctx: AppContext, parsed: ParsedTransaction, query: Query, schedule: FeeSchedule) -> Page:
    """The estimate in the seed's described form (``LEDGERMIRROR_FEE_ESTIMATE_DESCRIBED_FORM``)."""
    state = await read_state(ctx, parsed) if query.state else None
    result = calculate(schedule, parsed, state, query.throttle, scale=False)
    unknown = await unknown_entities(ctx, parsed) if query.state else set()
    caveats = fee_notes(
        parsed, state=query.state, default_schedule=schedule.source == schedules.DEFAULT_SOURCE, unknown=unknown
    )
    return Page(result.to_described_json(caveats), headers={SCHEDULE_HEADER: schedule.source})


async def estimate(request: Request, ctx: AppContext) -> Page:
    check_content_type(request.headers.get("content-type"))
    data = await read_body(request)
    query = parse_query(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    await protobuf.preload()
    try:
        parsed = parse(data)
        schedule = await fee_schedule(ctx)
        if ctx.settings.fee_estimate_described_form:
            return await described(ctx, parsed, query, schedule)
        state = await read_state(ctx, parsed) if query.state else None
        result = calculate(schedule, parsed, state, query.throttle)
    except TransactionError as error:
        raise BadRequest(str(error)) from None
    return Page(result.to_json(), headers={SCHEDULE_HEADER: schedule.source})


ENDPOINT = Endpoint(
    path=PATH,
    handler=estimate,
    params=PARAMS,
    max_age=0,
    summary="Estimate the fees of a transaction",
    description="Itemized node, network and service fees in tinycents for a protobuf Transaction "
    "(at most 6 KiB). X-Fee-Schedule names the schedule used: file 0.0.113 or the shipped default.",
    response_schema={"type": "object"},
    tag="network",
    method="POST",
    operation_id="api_v1_network_fees_estimate",
    request_body={
        "required": True,
        "content": {
            media: {"schema": {"type": "string", "format": "binary", "maxLength": MAX_BODY_BYTES}}
            for media in sorted(CONTENT_TYPES)
        },
    },
    extra_responses={
        "413": {"description": "Body over 6 KiB"},
        "415": {"description": "Content-Type is not application/protobuf"},
    },
)
"""Registered beside the GET endpoint of the same path: Starlette matches routes by path and method."""
