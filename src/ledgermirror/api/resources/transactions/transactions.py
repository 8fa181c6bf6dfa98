"""``GET /api/v1/transactions``: the transaction list, as the reference serves it.

Parameters: ``account.id`` (any operator; equalities are one list, every other operator its own condition),
``timestamp`` (any operator, no strict rules: the tightest bounds win, ``ne`` excludes, more than one distinct
equality or an empty range is an empty page), ``transactiontype`` (repeatable), ``result`` (``success`` or
``fail``, the last wins), ``type`` (``credit`` or ``debit``; two different values are an empty page), ``limit``
and ``order`` (default desc). With ``bind_timestamp_range`` an open or wide window is cut to
``max_transactions_timestamp_range_ns`` and the next link continues past the cut even from a short page.

Two phases: ``transactions_query.page_statement`` finds the page's consensus timestamps, ``load`` reads their
details; rendering is ``transaction_render.render`` (one transaction in the reference's list form).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches, Row, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import (
    Filter,
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.querystring.window import bind, timestamp_window
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts.account import transaction_type
from ledgermirror.api.resources.transactions.account_transactions_query import (
    DETAILS_SQL,
    STAKING_REWARD_ACCOUNT_NUM,
    first_timestamp,
)
from ledgermirror.api.resources.transactions.transaction_render import render
from ledgermirror.api.resources.transactions.transaction_schema import TRANSACTION
from ledgermirror.api.resources.transactions.transactions_query import (
    AccountCondition,
    TransactionsFilter,
    page_statement,
)
from ledgermirror.db.sql import Select, Statement, template
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.ledger.transaction_codes import TYPE_NUMBERS, result_number

SUCCESS_RESULTS = (
    result_number("SUCCESS"),
    result_number("FEE_SCHEDULE_FILE_PART_UPLOADED"),
    result_number("SUCCESS_BUT_MISSING_EXPECTED_OPERATION"),
)
"""The results ``result=success`` means (``fail``: any other)."""


def _lower(*allowed: str) -> Callable[[str, ParseContext], str]:
    """One of ``allowed``, case-insensitive; the value comes back lower-cased."""

    def parse(text: str, ctx: ParseContext) -> str:
        value = text.lower()
        if value not in allowed:
            raise InvalidValue(text)
        return value

    return parse


ACCOUNT_ID = ParamSpec[EntityId | EvmAddress](
    "account.id",
    values.entity_id(EvmForm.ANY),
    "Transactions the account paid for, is the entity of, or sent or received hbar or tokens in; an entity id "
    "or EVM address, with any operator (equalities are alternatives, other operators all apply).",
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="0.0.1001",
)
TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "Consensus timestamp (seconds[.nanoseconds]) bounds; ne excludes; the tightest bounds apply.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1700000000.000000000",
)
TRANSACTIONTYPE = ParamSpec[str](
    "transactiontype",
    transaction_type,
    "Only transactions of this type (case-insensitive); repeat for several.",
    schema={"type": "string", "enum": sorted(TYPE_NUMBERS)},
    example="CRYPTOTRANSFER",
)
RESULT = ParamSpec[str](
    "result",
    _lower("success", "fail"),
    "success or fail (case-insensitive); the last value applies.",
    repeatable=False,
    schema={"type": "string", "enum": ["success", "fail"]},
)
TYPE = ParamSpec[str](
    "type",
    _lower("credit", "debit"),
    "Only transactions in which the account (or any account) received (credit) or sent (debit) hbar or tokens.",
    schema={"type": "string", "enum": ["credit", "debit"]},
)

PARAMS = ParamSet([ACCOUNT_ID, LIMIT, ORDER, TIMESTAMP, TRANSACTIONTYPE, RESULT, TYPE])


@dataclass(frozen=True, slots=True)
class Context:
    found: TransactionsFilter
    edge: int | None
    """Where the next page starts when ``bind_timestamp_range`` cut the window (None: not cut)."""
    staking_account: int


async def _accounts(ctx: AppContext, filters: list[Filter[EntityId | EvmAddress]]) -> dict[str, Any]:
    encoded = await evm_lookup.filter_values(ctx, [item.value for item in filters])
    accounts_in: list[int] = []
    conditions: list[AccountCondition] = []
    equalities = False
    for item, value in zip(filters, encoded, strict=True):
        if item.op is Op.EQ:
            equalities = True
            if value is not None:
                accounts_in.append(value)
        elif value is None:
            raise NothingMatches  # a bound on an address no entity has
        else:
            conditions.append(AccountCondition(item.op, value))
    if equalities and not accounts_in:
        raise NothingMatches
    return {"accounts_in": tuple(dict.fromkeys(accounts_in)), "account_conditions": tuple(conditions)}


async def prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Context:
    signs = {item.value for item in query.filters(TYPE)}
    if len(signs) > 1:
        raise NothingMatches
    window = timestamp_window(query.filters(TIMESTAMP)).folded()
    if window is None:
        raise NothingMatches
    types: tuple[int, ...] | None = None
    if query.has(TRANSACTIONTYPE):
        names = [item.value for item in query.filters(TRANSACTIONTYPE)]
        types = tuple(sorted({number for name in names if (number := TYPE_NUMBERS[name]) is not None}))
        if not types:
            raise NothingMatches
    result = query.last(RESULT, None)
    accounts = await _accounts(ctx, query.filters(ACCOUNT_ID))
    lower, upper, edge = window.lower, window.upper, None
    if ctx.settings.bind_timestamp_range:
        first = window.lower
        if first is None:
            rows = await ctx.database.fetch(first_timestamp())
            first = rows[0]["consensus_timestamp"] if rows else None
        if first is None:
            raise NothingMatches
        order = query.last(ORDER, Order.DESC)
        width = ctx.settings.max_transactions_timestamp_range_ns
        bound = bind(window, order, first=int(first), now=ctx.clock.now_ns(), width=width)
        lower, upper, edge = bound.lower, bound.upper, bound.edge
    found = TransactionsFilter(
        lower=lower,
        upper=upper,
        excluded=window.excluded,
        sign=signs.pop() if signs else None,
        types=types,
        results=None if result is None else SUCCESS_RESULTS,
        results_excluded=result == "fail",
        **accounts,
    )
    staking = EntityId(ctx.settings.shard, ctx.settings.realm, STAKING_REWARD_ACCOUNT_NUM).encoded
    return Context(found, edge, staking)


def plan(context: Context, query: ParsedQuery, row_limit: int, order: Order) -> Select | Statement:
    return page_statement(context.found, order=order, limit=row_limit)


def details(timestamps: list[int]) -> Statement:
    return template(DETAILS_SQL, timestamps=timestamps)


async def load(context: Context, rows: list[Row], ctx: AppContext) -> list[Row]:
    wanted = [row["consensus_timestamp"] for row in rows]
    position = {stamp: index for index, stamp in enumerate(wanted)}
    loaded = await ctx.database.fetch(details(wanted))
    if any(row["max_custom_fees"] for row in loaded):
        await protobuf.preload()  # decoding them needs the HAPI classes: import them off the event loop
    return sorted(loaded, key=lambda row: position[row["consensus_timestamp"]])


def render_row(context: Context, row: Row) -> dict[str, Any]:
    return render(row, context.staking_account)


def _anchor(stamp: int) -> Anchor:
    return Anchor(TIMESTAMP.name, format_ns(stamp) or "", number=stamp)


def anchors(context: Context, query: ParsedQuery, row: Row, ctx: AppContext) -> list[Anchor]:
    return [_anchor(row["consensus_timestamp"])]


def continues(context: Context, query: ParsedQuery, last: Row | None) -> list[Anchor]:
    return [] if context.edge is None else [_anchor(context.edge)]


LIST = ListSpec[Request, Context](
    path="/api/v1/transactions",
    items="transactions",
    params=PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=prepare,
    plan=plan,
    render_with=render_row,
    anchors=anchors,
    max_age=2,
    summary="List transactions",
    description="Transactions in consensus order (newest first by default), with their hbar, token and NFT "
    "transfers and staking rewards, filtered by account, time, type, result or transfer direction.",
    item_schema=TRANSACTION,
    tag="transactions",
    load=load,
    continues=continues,
)
ENDPOINT = LIST.endpoint()
