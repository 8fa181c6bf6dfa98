"""``GET /api/v1/contracts/results/logs`` and ``GET /api/v1/contracts/{contractIdOrAddress}/results/logs``: the
event logs of contract results, newest first by default, keyset-paginated by (timestamp, index).

Parameters: ``index`` (all operators but ``ne``), ``timestamp``, ``topic0``..``topic3`` (hex, equality only,
repeatable: several values of one topic are alternatives, different topics all apply; a topic search needs a
timestamp equality or a closed range of at most 7 days), ``limit``, ``order``, and on the global route
``transaction.hash`` (one 32- or 48-byte hash: the logs of that transaction). The per-contract route takes the
timestamp filters as given; the global route takes the tightest bounds (``optimized``) and, with
``bind_timestamp_range``, cuts an open or wide window to ``max_transactions_timestamp_range_ns``, its next link
continuing past the cut. Bound rules, statements and rendering are in ``contract_logs_query.py``; each log
carries its block (``contract_blocks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, NothingMatches, Row, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import Limit, integer_key
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, RANGE_OPS, Order, RawQuery
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext, ParsedQuery
from ledgermirror.api.querystring.window import TimestampWindow, bind
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_blocks, contract_ref
from ledgermirror.api.resources.contracts import contract_logs_query as logs
from ledgermirror.api.resources.transactions.account_transactions_query import first_timestamp
from ledgermirror.db.sql import Select
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.timestamps import format_ns

INT32_MAX = 2**31 - 1
_TOPIC_DIGITS = frozenset("0123456789abcdefABCDEF")


def _topic(text: str, ctx: ParseContext) -> bytes:
    digits = text.removeprefix("0x")
    if not 1 <= len(digits) <= 64 or not set(digits) <= _TOPIC_DIGITS:
        raise InvalidValue(text)
    return logs.topic_value(text)


def _transaction_hash(text: str, ctx: ParseContext) -> bytes:
    digits = text.removeprefix("0x")
    if len(digits) not in (64, 96) or not set(digits) <= _TOPIC_DIGITS:
        raise InvalidValue(text)
    return bytes.fromhex(digits)


INDEX = ParamSpec[int](
    "index",
    values.integer_between(0, INT32_MAX),
    "The log's index in its record file, with an optional operator (eq, gt, gte, lt, lte); needs a timestamp "
    "filter (an equality a timestamp equality, a lower bound timestamp gte or eq, an upper bound lte or eq).",
    schema={"type": "string", "pattern": r"^\d{1,9}$"},
    example="gt:0",
    doc_ops=RANGE_OPS,
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "Consensus timestamp (seconds[.nanoseconds]) bounds: at most one equality, one lower and one upper bound.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1700000000.000000000",
    doc_ops=RANGE_OPS,
)
TOPICS = tuple(
    ParamSpec[bytes](
        name,
        _topic,
        f"The log's {name} (hex, 1 to 64 digits, optional 0x); repeat for alternatives. Needs a timestamp "
        "equality or a range of at most 7 days.",
        ops=EQ_ONLY,
        schema={"type": "string", "pattern": r"^(0x)?[0-9A-Fa-f]{1,64}$"},
        example="0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    )
    for name in logs.TOPICS
)
TRANSACTION_HASH = ParamSpec[bytes](
    "transaction.hash",
    _transaction_hash,
    "Only the logs of the transaction with this hash (32 or 48 bytes as hex, optional 0x).",
    ops=EQ_ONLY,
    schema={"type": "string", "pattern": r"^(0x)?([0-9A-Fa-f]{64}|[0-9A-Fa-f]{96})$"},
    max_count=1,
)


def _one_transaction_hash(raw: RawQuery) -> None:
    if len(raw.items.get(TRANSACTION_HASH.name, [])) > 1:
        raise BadRequest("Only one transaction.hash filter is allowed")


CONTRACT_PARAMS = ParamSet([INDEX, LIMIT, ORDER, TIMESTAMP, *TOPICS], per_value=True)
GLOBAL_PARAMS = ParamSet(
    [INDEX, LIMIT, ORDER, TIMESTAMP, *TOPICS, TRANSACTION_HASH], [_one_transaction_hash], per_value=True
)

LOG: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": "string", "pattern": "^0x[0-9a-f]{40}$"},
        "bloom": {"type": "string", "pattern": "^0x[0-9a-f]*$"},
        "contract_id": schemas.ENTITY_ID,
        "data": {"type": "string", "pattern": "^0x[0-9a-f]*$"},
        "index": {"type": "integer"},
        "topics": {"type": "array", "items": {"type": "string", "pattern": "^0x[0-9a-f]{64}$"}},
        "block_hash": {"type": "string", "pattern": "^0x[0-9a-f]*$"},
        "block_number": {"type": ["integer", "null"], "format": "int64"},
        "root_contract_id": schemas.ENTITY_ID,
        "timestamp": {"type": "string", "example": "1586567700.453054000"},
        "transaction_hash": {"type": "string", "pattern": "^0x[0-9a-f]*$"},
        "transaction_index": {"type": ["integer", "null"]},
    },
    "required": ["address", "bloom", "contract_id", "data", "index", "topics", "timestamp"],
}


@dataclass(frozen=True, slots=True)
class Context:
    bounds: logs.LogBounds
    contract: int | None
    topics: dict[str, list[bytes]] = field(default_factory=dict)
    pinned: int | None = None
    """The consensus timestamp a ``transaction.hash`` named."""
    edge: int | None = None
    """Where the next page starts when ``bind_timestamp_range`` cut the window (None: not cut)."""


def _topics(query: ParsedQuery) -> dict[str, list[bytes]]:
    """The topic filters by name; a topic search needs the strict timestamp rules (400s)."""
    topics = {spec.name: [item.value for item in query.filters(spec)] for spec in TOPICS if query.has(spec)}
    if topics:
        logs.check_topic_timestamps(logs.collapse(query.filters(TIMESTAMP)))
    return topics


def _indexes(query: ParsedQuery) -> list[Limit]:
    return [Limit(item.op, item.value) for item in query.filters(INDEX)]


async def _prepare_contract(ref: contract_ref.ContractRef, query: ParsedQuery, ctx: AppContext) -> Context:
    """The path's form (``locate``), then the query (400s), then the create2 address lookup (404), as the
    reference."""
    topics = _topics(query)
    stamps = [Limit(item.op, item.value) for item in logs.collapse(query.filters(TIMESTAMP))]
    bounds = logs.log_bounds(stamps, _indexes(query))
    contract = ref.encoded if isinstance(ref, EntityId) else await contract_ref.resolve_address(ctx, ref)
    return Context(bounds, contract, topics)


async def _prepare_global(request: Request, query: ParsedQuery, ctx: AppContext) -> Context:
    topics = _topics(query)
    bounds = logs.log_bounds(logs.optimized(logs.collapse(query.filters(TIMESTAMP))), _indexes(query))
    context = Context(bounds, None, topics)
    full_hash = query.last(TRANSACTION_HASH, None)
    order = query.last(ORDER, Order.DESC)
    if full_hash is not None:
        found = await ctx.database.fetch(logs.hash_statement(full_hash, bounds, order))
        stamps = [row["consensus_timestamp"] for row in found if bytes(row["hash"]).startswith(full_hash)]
        if not stamps:
            raise NothingMatches
        return replace(context, pinned=stamps[0])
    if ctx.settings.bind_timestamp_range and bounds.timestamp.equal is None:
        stamp = bounds.timestamp
        lower = None if stamp.lower is None else stamp.lower.closed
        upper = None if stamp.upper is None else stamp.upper.closed
        first = lower
        if first is None:
            rows = await ctx.database.fetch(first_timestamp())
            if not rows:
                raise NothingMatches
            first = rows[0]["consensus_timestamp"]
        window = bind(
            TimestampWindow(lower, upper),
            order,
            first=int(first),
            now=ctx.clock.now_ns(),
            width=ctx.settings.max_transactions_timestamp_range_ns,
        )
        if window.edge is not None and window.lower is not None and window.upper is not None:
            # cut: the window replaces the range; uncut, the range stays as given (open sides open)
            context = replace(
                context, bounds=logs.with_window(bounds, window.lower, window.upper), edge=window.edge
            )
    return context


def _plan(context: Context, query: ParsedQuery, row_limit: int, order: Order) -> Select:
    return logs.plan(
        context.bounds,
        contract=context.contract,
        topics=context.topics,
        pinned=context.pinned,
        limit=row_limit,
        order=order,
    )


async def _load(context: Context, rows: list[Row], ctx: AppContext) -> list[Row]:
    """The page's rows, each with its block."""
    blocks = await contract_blocks.blocks_of(ctx, (row["consensus_timestamp"] for row in rows))
    return [(row, blocks.get(row["consensus_timestamp"], contract_blocks.NO_BLOCK)) for row in rows]


def _render(row: Row) -> dict[str, Any]:
    log, block = row
    return logs.render(log, block)


def _anchors(context: Context, query: ParsedQuery, row: Row, ctx: AppContext) -> list[Anchor]:
    stamp = row["consensus_timestamp"]
    return context.bounds.keyset.anchors([(format_ns(stamp) or "", stamp), integer_key(row["index"])])


def _continues(context: Context, query: ParsedQuery, row: Row | None) -> list[Anchor]:
    """Past a cut window: the timestamp where it was cut (inclusive, as the reference writes it) and, after a
    row, that row's index."""
    if context.edge is None:
        return []
    found = [Anchor(TIMESTAMP.name, format_ns(context.edge) or "", inclusive=True, number=context.edge)]
    if row is not None:
        found.append(Anchor(INDEX.name, str(row["index"])))
    return found


_DESCRIPTION = (
    "Newest first by default; a next link continues after the last log (timestamp and index). Topic filters "
    "need a timestamp equality or a range of at most 7 days."
)
CONTRACT_LIST = ListSpec[contract_ref.ContractRef, Context](
    path="/api/v1/contracts/{contractIdOrAddress}/results/logs",
    items="logs",
    params=CONTRACT_PARAMS,
    default_order=Order.DESC,
    locate=contract_ref.path_contract,
    prepare=_prepare_contract,
    plan=_plan,
    render=_render,
    anchors=_anchors,
    max_age=1,
    summary="List the logs of a contract",
    description="The event logs the contract emitted. " + _DESCRIPTION,
    item_schema=LOG,
    tag="contracts",
    path_params=(contract_ref.OPENAPI_PATH_PARAMETER,),
    load=_load,
)
GLOBAL_LIST = ListSpec[Request, Context](
    path="/api/v1/contracts/results/logs",
    items="logs",
    params=GLOBAL_PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=_prepare_global,
    plan=_plan,
    render=_render,
    anchors=_anchors,
    max_age=10,
    summary="List contract logs",
    description="The event logs of every contract, or of one transaction (transaction.hash). " + _DESCRIPTION,
    item_schema=LOG,
    tag="contracts",
    load=_load,
    continues=_continues,
)
CONTRACT_ENDPOINT = CONTRACT_LIST.endpoint()
GLOBAL_ENDPOINT = GLOBAL_LIST.endpoint()
