"""The contract result lists (``upstream-contracts.md`` §4.1):
``GET /api/v1/contracts/{contractIdOrAddress}/results`` and ``GET /api/v1/contracts/results``.

Parameters: ``from`` (the sender: an entity id or an EVM address, any operator; equalities are one list),
``block.number`` / ``block.hash`` (equality only, not both; the last one counts: the results inside that record
file, none when no file matches), ``transaction.index`` (equality only, needs a block filter), ``internal``
(default false: child results, those with a nonzero nonce, are hidden), ``hbar`` (global list: tinybars or
weibars; the per-contract list accepts and ignores it), ``timestamp``, ``limit`` and ``order`` (default desc).

The per-contract list applies each timestamp filter as written; the global list folds them into one range (an
empty range is an empty page), the equalities and the exclusions, and with ``bind_timestamp_range`` cuts an open
or wide range to ``max_transactions_timestamp_range_ns``, the next link then continuing past the cut. The global
list shows the detailed object (:mod:`.contract_result_detail`) without logs and state changes, with the block
and the Ethereum transaction of each result.

With ``synthetic_contract_results`` (default on, the reference's ``query.syntheticContractResults``) both
lists also show one result per transaction with ``synthetic`` contract logs (HAPI token transfers) and no
result of its own (:data:`.contract_results_query.SYNTHETIC_HEAD`), merged in consensus order by one
``union all`` (each part ordered and limited); the timestamp, block, ``transaction.index`` and path-contract
filters apply to them, a ``from`` filter leaves them out.

Next links repeat the query with a timestamp bound after the last result (also after equality-only timestamp
filters, which the reference repeats unchanged, a link that would return the same page again).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, InternalError, NotFound
from ledgermirror.api.listing import ListSpec, NothingMatches, Row
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import ALL_OPS, EQ_ONLY, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import (
    Filter,
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.querystring.window import TimestampWindow, bind, timestamp_window
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.blocks.blocks import parse_block_number
from ledgermirror.api.resources.contracts import contract_blocks, contract_ref
from ledgermirror.api.resources.contracts import contract_results_query as queries
from ledgermirror.api.resources.contracts.contract_result_defaults import GasPrices, defaults_of
from ledgermirror.api.resources.contracts.contract_result_detail import DETAIL_SCHEMA, Extras, render_detail
from ledgermirror.api.resources.contracts.contract_result_render import RESULT_SCHEMA, render_result
from ledgermirror.api.resources.transactions.account_transactions_query import first_timestamp
from ledgermirror.api.resources.transactions.transaction import INT32_MAX
from ledgermirror.db.sql import Select, Statement, union_all
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, InvalidEntityId, long_zero_num
from ledgermirror.ledger.timestamps import format_ns

_EVM = re.compile(r"(0x)?([0-9a-fA-F]{40})", re.ASCII)
_BLOCK_HASH = re.compile(r"(?:0x)?([0-9a-fA-F]{64}|[0-9a-fA-F]{96})", re.ASCII)


def sender(text: str, ctx: ParseContext) -> EntityId | EvmAddress:
    """An entity id, or an EVM address without a ``shard.realm.`` prefix (long-zero addresses name their num)."""
    match = _EVM.fullmatch(text)
    try:
        if match is None:
            return EntityId.parse(text, shard=ctx.shard, realm=ctx.realm)
        num = long_zero_num(match.group(2).lower())
        if num is None:
            return EvmAddress(bytes.fromhex(match.group(2)))
        return EntityId(ctx.shard, ctx.realm, num)
    except InvalidEntityId:
        raise InvalidValue(text) from None


def block_hash(text: str, ctx: ParseContext) -> str:
    """64 or 96 hex digits (optional ``0x``), lower-cased."""
    match = _BLOCK_HASH.fullmatch(text)
    if match is None:
        raise InvalidValue(text)
    return match.group(1).lower()


def block_number(text: str, ctx: ParseContext) -> int:
    value = parse_block_number(text)
    if value is None:
        raise InvalidValue(text)
    return value


FROM = ParamSpec[EntityId | EvmAddress](
    "from",
    sender,
    "The sender: an entity id or an EVM address, with any operator (equalities are alternatives).",
    ops=ALL_OPS,
    schema={"type": "string", "pattern": f"^({schemas.ENTITY_ID_VALUE}|{schemas.EVM_ADDRESS_VALUE})$"},
    example="0.0.1001",
)
BLOCK_HASH = ParamSpec[str](
    "block.hash",
    block_hash,
    "Only results in the block with this hash (64 or 96 hex digits, optional 0x); equality only, not with "
    "block.number.",
    ops=EQ_ONLY,
    schema={"type": "string", "pattern": r"^(0x)?([0-9a-fA-F]{64}|[0-9a-fA-F]{96})$"},
)
BLOCK_NUMBER = ParamSpec[int](
    "block.number",
    block_number,
    "Only results in the block with this number (decimal or 0x hex); equality only, not with block.hash.",
    ops=EQ_ONLY,
    schema={"type": "string", "pattern": r"^(\d{1,18}|0x[0-9a-fA-F]{1,15})$"},
    example="10",
)
TRANSACTION_INDEX = ParamSpec[int](
    "transaction.index",
    values.integer_between(0),
    "Only results at this position in their block (needs block.number or block.hash); equality only.",
    ops=EQ_ONLY,
    schema=schemas.INT64_QUERY,
    example="1",
)
INTERNAL = ParamSpec[bool](
    "internal",
    values.true_false,
    "Include child results (contract calls made by contracts); default false.",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean"},
)
HBAR = ParamSpec[bool](
    "hbar",
    values.true_false,
    "Amounts and gas prices in tinybars (true, the default) or weibars (false).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean"},
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "Consensus timestamp (seconds[.nanoseconds]) with an optional operator; repeat for ranges.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1700000000.000000000",
)

PARAMS = ParamSet([FROM, BLOCK_HASH, BLOCK_NUMBER, HBAR, INTERNAL, LIMIT, ORDER, TIMESTAMP, TRANSACTION_INDEX])


def usage(key: str, error: str) -> BadRequest:
    return BadRequest(f"Invalid parameter usage: {key} - {error}")


def check_dependencies(query: ParsedQuery) -> None:
    """The reference's rules between filters, after every value is valid."""
    if query.has(BLOCK_HASH) and query.has(BLOCK_NUMBER):
        raise usage(BLOCK_HASH.name, "cannot combine block.number and block.hash")
    if query.has(TRANSACTION_INDEX) and not (query.has(BLOCK_HASH) or query.has(BLOCK_NUMBER)):
        raise usage(
            TRANSACTION_INDEX.name, "transaction.index requires block.number or block.hash filter to be specified"
        )


@dataclass(frozen=True, slots=True)
class Context:
    contract: int | None
    """The path contract (per-contract list), None for the global list."""
    senders_in: tuple[int, ...]
    sender_conditions: tuple[tuple[Op, int], ...]
    timestamps_in: tuple[int, ...]
    timestamp_conditions: tuple[tuple[Op, int], ...]
    indexes_in: tuple[int, ...]
    internal: bool
    synthetic: bool = False
    """Merge in results made from synthetic logs (the setting on and no ``from`` filter)."""
    hbar: bool = True
    delegation: bool = True
    edge: int | None = None
    """Where the next page starts when ``bind_timestamp_range`` cut the window (None: not cut)."""


async def _addresses(ctx: AppContext, addresses: list[bytes]) -> dict[bytes, int]:
    """The one live entity of each address, in one statement: ``404 Not found`` when an address has none,
    ``500`` when it has several (a broken database), as the reference's sender lookup answers."""
    if not addresses:
        return {}
    found: dict[bytes, list[int]] = {}
    for row in await ctx.database.fetch(evm_lookup.live_by_address(sorted(set(addresses))).build()):
        found.setdefault(bytes(row["evm_address"]), []).append(int(row["id"]))
    if any(address not in found for address in addresses):
        raise NotFound()
    if any(len(ids) > 1 for ids in found.values()):
        raise InternalError()
    return {address: ids[0] for address, ids in found.items()}


async def _senders(ctx: AppContext, filters: list[Filter[EntityId | EvmAddress]]) -> dict[str, Any]:
    """Sender equalities as one list, other operators as conditions; an unknown address is ``404 Not found``."""
    known = await _addresses(ctx, [item.value.address for item in filters if isinstance(item.value, EvmAddress)])
    senders_in: list[int] = []
    conditions: list[tuple[Op, int]] = []
    for item in filters:
        value = item.value
        encoded = value.encoded if isinstance(value, EntityId) else known[value.address]
        if item.op is Op.EQ:
            senders_in.append(encoded)
        else:
            conditions.append((item.op, encoded))
    return {"senders_in": tuple(dict.fromkeys(senders_in)), "sender_conditions": tuple(conditions)}


async def _block_range(ctx: AppContext, query: ParsedQuery) -> list[Filter[int]]:
    """The timestamp bounds of the ``block.number``/``block.hash`` filter (the last one given); no block with
    that number or hash: :class:`NothingMatches`."""
    blocks = [
        item for key, found in query.given.items() if key in (BLOCK_HASH.name, BLOCK_NUMBER.name) for item in found
    ]
    if not blocks:
        return []
    last = blocks[-1]
    select = (
        queries.block_by_hash(last.value) if last.key == BLOCK_HASH.name else queries.block_by_number(last.value)
    )
    rows = await ctx.database.fetch(select.build())
    if not rows:
        raise NothingMatches
    start, end = int(rows[0]["consensus_start"]), int(rows[0]["consensus_end"])
    return [Filter(TIMESTAMP.name, Op.GTE, start), Filter(TIMESTAMP.name, Op.LTE, end)]


def _raw_timestamps(filters: Sequence[Filter[int]]) -> dict[str, Any]:
    """Per-contract: each filter its own condition, equalities one list."""
    return {
        "timestamps_in": tuple(dict.fromkeys(item.value for item in filters if item.op is Op.EQ)),
        "timestamp_conditions": tuple((item.op, item.value) for item in filters if item.op is not Op.EQ),
    }


async def _optimized_timestamps(ctx: AppContext, filters: Sequence[Filter[int]], order: Order) -> dict[str, Any]:
    """Global: the tightest range, the equalities, the exclusions; the range cut by ``bind_timestamp_range``
    when no equality is given. An empty range: :class:`NothingMatches`."""
    window = timestamp_window(filters)
    if window.range_empty:
        raise NothingMatches
    lower, upper, equal = window.lower, window.upper, window.equals
    excluded = tuple((Op.NE, value) for value in window.excluded)
    edge = None
    if ctx.settings.bind_timestamp_range and not equal:
        first = lower
        if first is None:
            rows = await ctx.database.fetch(first_timestamp())
            first = int(rows[0]["consensus_timestamp"]) if rows else None
        if first is not None:
            width = ctx.settings.max_transactions_timestamp_range_ns
            bound = bind(TimestampWindow(lower, upper), order, first=first, now=ctx.clock.now_ns(), width=width)
            lower, upper, edge = bound.lower, bound.upper, bound.edge
    conditions: list[tuple[Op, int]] = []
    if lower:
        conditions.append((Op.GTE, lower))
    if upper is not None:
        conditions.append((Op.LTE, upper))
    return {"timestamps_in": equal, "timestamp_conditions": (*conditions, *excluded), "edge": edge}


async def _every_contract(request: Request, ctx: AppContext) -> contract_ref.ContractRef | None:
    """The global list's ``locate``: no contract in the path."""
    return None


async def prepare(path: contract_ref.ContractRef | None, query: ParsedQuery, ctx: AppContext) -> Context:
    """The reference's order: the path's form (400, ``locate``), the parameters (400), then the lookups (404)."""
    check_dependencies(query)
    contract = None
    if path is not None:
        contract = path.encoded if isinstance(path, EntityId) else await contract_ref.resolve_address(ctx, path)
    order = query.last(ORDER, Order.DESC)
    senders = await _senders(ctx, query.filters(FROM))
    timestamps = [*query.filters(TIMESTAMP), *await _block_range(ctx, query)]
    if contract is None:
        found = await _optimized_timestamps(ctx, timestamps, order)
    else:
        found = _raw_timestamps(timestamps)
    indexes = [item.value for item in query.filters(TRANSACTION_INDEX)]
    if indexes and not any(value <= INT32_MAX for value in indexes):
        raise NothingMatches  # transaction_index is an integer column: no row has a larger index
    context = Context(
        contract=contract,
        indexes_in=tuple(dict.fromkeys(value for value in indexes if value <= INT32_MAX)),
        internal=query.last(INTERNAL, False),
        synthetic=ctx.settings.synthetic_contract_results and not query.has(FROM),
        hbar=query.last(HBAR, True),
        delegation=ctx.settings.enable_delegation_address,
        **senders,
        **found,
    )
    return context


def plan(context: Context, query: ParsedQuery, row_limit: int, order: Order) -> Select | Statement:
    """The ``contract_result`` rows; with synthetic results on, merged with those made from synthetic logs (each
    part ordered and limited, then the union: one result per timestamp, so the timestamp stays the page key)."""
    select = _real_results(context, row_limit, order)
    if not context.synthetic:
        return select
    synthetic = select.joined_by(queries.SYNTHETIC_HEAD)
    synthetic.where(queries.SYNTHETIC_ONLY).where(queries.NOT_WILDCARD)
    if context.contract is not None:
        synthetic.compare(queries.SYNTHETIC_CONTRACT, Op.EQ, context.contract)
    for op, value in context.timestamp_conditions:
        synthetic.compare(queries.SYNTHETIC_TIMESTAMP, op, value)
    if context.timestamps_in:
        synthetic.any_of(queries.SYNTHETIC_TIMESTAMP, context.timestamps_in)
    if context.indexes_in:
        synthetic.any_of(queries.SYNTHETIC_TRANSACTION_INDEX, context.indexes_in)
    synthetic.where(queries.NO_REAL_RESULT if context.contract is None else queries.NO_REAL_RESULT_OF_CONTRACT)
    synthetic.order_by([queries.SYNTHETIC_TIMESTAMP], order).then_by(queries.SYNTHETIC_LOG_INDEX, Order.ASC)
    return union_all([select, synthetic.limit(row_limit)], queries.MERGE_KEY, order, row_limit)


def _real_results(context: Context, row_limit: int, order: Order) -> Select:
    select = queries.results_select()
    if context.contract is not None:
        select.compare(queries.CONTRACT, Op.EQ, context.contract)
    for op, value in context.sender_conditions:
        select.compare(queries.SENDER, op, value)
    for op, value in context.timestamp_conditions:
        select.compare(queries.TIMESTAMP, op, value)
    if context.senders_in:
        select.any_of(queries.SENDER, context.senders_in)
    if context.timestamps_in:
        select.any_of(queries.TIMESTAMP, context.timestamps_in)
    if context.indexes_in:
        select.any_of(queries.TRANSACTION_INDEX, context.indexes_in)
    if not context.internal:
        select.where(queries.TOP_LEVEL)
    return select.order_by([queries.TIMESTAMP], order).limit(row_limit)


def timestamp_anchor(stamp: int) -> Anchor:
    return Anchor(TIMESTAMP.name, format_ns(stamp) or "", number=stamp)


def anchors(context: Context, query: ParsedQuery, row: Row, ctx: AppContext) -> list[Anchor]:
    return [timestamp_anchor(int(row["consensus_timestamp"]))]


def continues(context: Context, query: ParsedQuery, last: Row | None = None) -> list[Anchor]:
    """The link of a page the cut window ended (``last``, the page's last row, is not needed: the cut is)."""
    return [] if context.edge is None else [timestamp_anchor(context.edge)]


async def load_details(context: Context, rows: list[Row], ctx: AppContext) -> list[Row]:
    """Each result of the global page with its block and Ethereum transaction."""
    ethereum_rows, blocks = await asyncio.gather(
        ctx.database.fetch(queries.page_ethereum(rows)),
        contract_blocks.blocks_of(ctx, [int(row["consensus_timestamp"]) for row in rows]),
    )
    ethereum = {int(row["consensus_timestamp"]): row for row in ethereum_rows}
    types: dict[int, int] = {}
    plain = [int(row["consensus_timestamp"]) for row in rows if int(row["consensus_timestamp"]) not in ethereum]
    if ctx.settings.contract_result_defaults and plain:
        type_rows = await ctx.database.fetch(queries.page_types(plain))
        types = {int(item["consensus_timestamp"]): int(item["type"]) for item in type_rows}
    prices = GasPrices(ctx)
    loaded = []
    for row in rows:
        stamp = int(row["consensus_timestamp"])
        extras = Extras(
            block=blocks.get(stamp, contract_blocks.NO_BLOCK),
            ethereum=ethereum.get(stamp),
            hbar=context.hbar,
            delegation=context.delegation,
            defaults=await defaults_of(ctx, prices, stamp, types.get(stamp), stamp in ethereum),
        )
        loaded.append((row, extras))
    return loaded


def render_global_row(loaded: Row) -> dict[str, Any]:
    row, extras = loaded
    return render_detail(row, extras)


CONTRACT_LIST = ListSpec[contract_ref.ContractRef | None, Context](
    path="/api/v1/contracts/{contractIdOrAddress}/results",
    items="results",
    params=PARAMS,
    default_order=Order.DESC,
    locate=contract_ref.path_contract,
    prepare=prepare,
    plan=plan,
    render=render_result,
    anchors=anchors,
    max_age=1,
    summary="List a contract's results",
    description="The results of the calls to one contract (newest first by default), filtered by sender, "
    "block, position in the block, time, and whether child calls are included.",
    item_schema=RESULT_SCHEMA,
    tag="contracts",
    path_params=(contract_ref.OPENAPI_PATH_PARAMETER,),
)
GLOBAL_LIST = ListSpec[contract_ref.ContractRef | None, Context](
    path="/api/v1/contracts/results",
    items="results",
    params=PARAMS,
    default_order=Order.DESC,
    locate=_every_contract,
    prepare=prepare,
    plan=plan,
    render=render_global_row,
    anchors=anchors,
    max_age=10,
    summary="List contract results",
    description="The results of contract calls of every contract (newest first by default), each with its "
    "block and Ethereum transaction, filtered by sender, block, position in the block, time, and whether child "
    "calls are included; amounts in tinybars or weibars.",
    item_schema=DETAIL_SCHEMA,
    tag="contracts",
    load=load_details,
    continues=continues,
)
CONTRACT_ENDPOINT = CONTRACT_LIST.endpoint()
GLOBAL_ENDPOINT = GLOBAL_LIST.endpoint()
