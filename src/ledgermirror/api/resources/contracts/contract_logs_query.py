"""Contract logs, the query side: the reference's timestamp rules, the (timestamp, index) keyset and the
statements of ``/contracts/results/logs`` and ``/contracts/{id}/results/logs``.

Timestamp is the primary key of the pagination and ``index`` the secondary one; their bounds follow the Node
service's rules (``bounds.node_bound`` / ``check_node``: at most one eq, one lower and one upper each, no
``ne``). The three sub-queries of the reference (lower: the first timestamp after an index bound, inner: the
timestamps strictly between, upper: the last timestamp before an index bound) are written as row comparisons
on ``(consensus_timestamp, index)`` (``bounds.Keyset``, as token allowances page by (spender, token)), which
select the same rows in one statement; each comes with the plain timestamp bound so that an index on
``(contract_id, consensus_timestamp desc, index)`` reads only the range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import NothingMatches
from ledgermirror.api.querystring.bounds import Bound, Keyset, Limit, check_node, node_bound
from ledgermirror.api.querystring.params import Filter
from ledgermirror.api.querystring.window import closed, timestamp_window
from ledgermirror.api.resources.contracts import contract_encoding
from ledgermirror.api.resources.contracts.contract_blocks import Block
from ledgermirror.db.sql import Column, Fragment, Op, Order, Select, Statement, template
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.timestamps import format_ns

TOPIC_RANGE_NS = 7 * 86_400 * 1_000_000_000
"""The widest timestamp range a topic search may cover (the reference's ``maxTimestampRange``)."""
HASH_ROWS = 25
HASH_PREFIX_BYTES = 32
TOPICS = ("topic0", "topic1", "topic2", "topic3")

HEAD = """select cl.bloom, cl.contract_id, cl.consensus_timestamp, cl.data, cl.index, cl.root_contract_id,
       cl.topic0, cl.topic1, cl.topic2, cl.topic3, cl.transaction_hash, cl.transaction_index, e.evm_address
from contract_log cl
left join entity e on e.id = cl.contract_id"""
HASH_SQL = Fragment("""select consensus_timestamp, hash || coalesce(hash_suffix, ''::bytea) as hash
from transaction_hash
where substring(hash from 1 for 32) = {prefix}
  and consensus_timestamp between {lower} and {upper}
order by consensus_timestamp {order}
limit {limit}""")
HASH_SQL_BY_ORDER = {order: HASH_SQL.fill(order=order, limit=HASH_ROWS) for order in Order}

_CONTRACT = Column("cl.contract_id")
COLUMNS = {
    "timestamp": Column("cl.consensus_timestamp"),
    "index": Column("cl.index"),
    **{name: Column(f"cl.{name}") for name in TOPICS},
}
_TIMESTAMP, _INDEX = COLUMNS["timestamp"], COLUMNS["index"]
_LOWER = frozenset({Op.GT, Op.GTE})
_UPPER = frozenset({Op.LT, Op.LTE})


def topic_value(text: str) -> bytes:
    """A topic as stored: ``0x`` and leading zeros stripped, left-padded to whole bytes (``0x00`` -> empty)."""
    digits = text.removeprefix("0x").lstrip("0")
    return bytes.fromhex(digits.rjust(len(digits) + len(digits) % 2, "0"))


def collapse(filters: list[Filter[int]]) -> list[Filter[int]]:
    """``gte:T`` and ``lte:T`` of the same T (and nothing else) is ``eq:T``."""
    pair = len(filters) == 2 and {item.op for item in filters} == {Op.GTE, Op.LTE}
    if pair and filters[0].value == filters[1].value:
        return [Filter(filters[0].key, Op.EQ, filters[0].value, filters[0].text)]
    return filters


def check_topic_timestamps(filters: Sequence[Filter[int]]) -> None:
    """A topic search needs a timestamp equality or a closed range of at most 7 days (the strict rules)."""

    def fail(reason: str) -> BadRequest:
        return BadRequest(f"Cannot search topics without a valid timestamp range: {reason}")

    lower: int | None = None
    upper: int | None = None
    equal = False
    for item in filters:
        if item.op is Op.NE:
            raise fail("Not equals operator not supported for timestamp param")
        if item.op is Op.EQ:
            equal = True
        elif item.op in _LOWER:
            if lower is not None:
                raise fail("Multiple gt or gte operators not permitted for timestamp param")
            lower = closed(item.op, item.value)
        elif upper is not None:
            raise fail("Multiple lt or lte operators not permitted for timestamp param")
        else:
            upper = closed(item.op, item.value)
    if not filters:
        raise fail("No timestamp range or eq operator provided")
    if equal and len(filters) > 1:
        raise fail("Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param")
    if not equal and (lower is None or upper is None):
        raise fail("Timestamp range must have gt (or gte) and lt (or lte), or eq operator")
    if lower is not None and upper is not None and (lower < 0 or upper < lower or upper - lower > TOPIC_RANGE_NS):
        raise fail("Timestamp range by the lower and upper bounds must be positive and within 7d")


def optimized(filters: Sequence[Filter[int]]) -> list[Limit]:
    """The global route's loose timestamp rules (the reference's ``optimizeTimestampFilters``): the tightest
    bounds as one ``gte`` and one ``lte``, an equality inside them as itself; :class:`NothingMatches` when no
    timestamp can match. ``ne`` is kept, for the bound's own refusal."""
    window = timestamp_window(filters).folded()
    if window is None:
        raise NothingMatches
    excluded = [Limit(Op.NE, value) for value in window.excluded]
    if window.equals:
        return [Limit(Op.EQ, window.equals[0]), *excluded]
    found = [] if window.lower is None else [Limit(Op.GTE, window.lower)]
    return found + ([] if window.upper is None else [Limit(Op.LTE, window.upper)]) + excluded


@dataclass(frozen=True, slots=True)
class LogBounds:
    """The validated (timestamp, index) bounds of a request."""

    timestamp: Bound
    index: Bound

    @property
    def keyset(self) -> Keyset:
        return Keyset((self.timestamp, self.index))


def log_bounds(timestamps: list[Limit], indexes: list[Limit]) -> LogBounds:
    """The reference's bound rules and messages, in its order."""
    timestamp = node_bound("timestamp", "timestamp", timestamps)
    index = node_bound("index", "index", indexes)
    if index.equal is not None and timestamp.equal is None:
        raise BadRequest("timestamp must have eq operator")
    check_node(timestamp, index)
    return LogBounds(timestamp, index)


def with_window(bounds: LogBounds, lower: int, upper: int) -> LogBounds:
    """The bounds with the timestamp range replaced by ``[lower, upper]`` (a bound window)."""
    timestamp = Bound("timestamp", "timestamp", list(bounds.timestamp.given))
    timestamp.lower = _keep(bounds.timestamp.lower, Op.GTE, lower)
    timestamp.upper = _keep(bounds.timestamp.upper, Op.LTE, upper)
    return LogBounds(timestamp, bounds.index)


def _keep(limit: Limit | None, op: Op, value: int) -> Limit:
    """The given limit when the window did not move it (its operator matters to the index row comparison)."""
    return limit if limit is not None and limit.closed == value else Limit(op, value)


def hash_statement(full_hash: bytes, bounds: LogBounds, order: Order) -> Statement:
    """The transactions whose hash starts with the hash's first 32 bytes, within the timestamp bounds."""
    stamp = bounds.timestamp
    lower = 0 if stamp.lower is None else max(0, stamp.lower.closed)
    upper = INT64_MAX if stamp.upper is None else stamp.upper.closed
    if stamp.equal is not None:
        lower = upper = stamp.equal.value
    return template(HASH_SQL_BY_ORDER[order], prefix=full_hash[:HASH_PREFIX_BYTES], lower=lower, upper=upper)


def plan(
    bounds: LogBounds,
    *,
    contract: int | None,
    topics: dict[str, list[bytes]],
    pinned: int | None,
    limit: int,
    order: Order,
) -> Select:
    select = Select(HEAD)
    if contract is not None:
        select.compare(_CONTRACT, Op.EQ, contract)
    if pinned is not None:
        select.compare(_TIMESTAMP, Op.EQ, pinned)
    stamp = bounds.timestamp
    if bounds.index.has_range and stamp.equal is None:
        for side in (stamp.lower, stamp.upper):
            if side is not None:
                select.compare(_TIMESTAMP, side.op, side.value)  # the plain range an index reads
    for condition in bounds.keyset.conditions():
        select.compare_rows([COLUMNS[key] for key in condition.columns], condition.op, condition.values)
    for name, wanted in topics.items():
        if len(wanted) == 1:
            select.compare(COLUMNS[name], Op.EQ, wanted[0])
        else:
            select.any_of(COLUMNS[name], wanted)
    return select.order_by([_TIMESTAMP, _INDEX], order).limit(limit)


# -- rendering ---------------------------------------------------------------------------------------------------


def render(row: Any, block: Block) -> dict[str, Any]:
    """One log (§7.3) in its block."""
    return {
        "address": contract_encoding.entity_address(row["evm_address"], row["contract_id"]),
        "bloom": contract_encoding.hex_bytes(row["bloom"]),
        "contract_id": format_encoded(row["contract_id"]),
        "data": contract_encoding.log_data_hex(row["data"]),
        "index": row["index"],
        "topics": contract_encoding.log_topics(*(row[name] for name in TOPICS)),
        "block_hash": block.block_hash,
        "block_number": block.number,
        "root_contract_id": format_encoded(row["root_contract_id"]),
        "timestamp": format_ns(row["consensus_timestamp"]),
        "transaction_hash": contract_encoding.hex_bytes(row["transaction_hash"]),
        "transaction_index": row["transaction_index"],
    }
