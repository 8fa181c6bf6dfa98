"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}``: one account, its balances and its latest transactions.

Checks run in the reference's order: query parameters, then the path (400 or 404), then the timestamp rules
(400, or ``404 Timestamp range is empty``), then the account itself (``404 Not found``).

Without ``timestamp`` the account is its current entity row with its live balance and associated tokens. With
``timestamp`` it is the latest entity version overlapping the range; its balance comes from the newest balance
snapshot in the range (found through the treasury account's row, at most a month before the range's end), or,
when there is none, from that entity version's own balance columns with no tokens.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext
from ledgermirror.api.querystring.window import TimestampWindow, timestamp_window
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts.account_query import current, historical
from ledgermirror.api.resources.accounts.account_ref import OPENAPI_PATH_PARAMETER, PATH_PARAMETER, resolve_account
from ledgermirror.api.resources.accounts.account_render import render_account
from ledgermirror.api.resources.accounts.account_schema import ONE_ACCOUNT_RESPONSE
from ledgermirror.api.resources.transactions import account_transactions_query
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.ledger.transaction_codes import TYPE_NUMBERS


def transaction_type(text: str, ctx: ParseContext) -> str:
    name = text.upper()
    if name not in TYPE_NUMBERS:
        raise InvalidValue(text)
    return name


TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The account as of this consensus time (seconds[.nanoseconds]) and the transactions in that range; at most "
    "one lower and one upper bound, any number of ne, or eq values alone.",
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
)
TRANSACTIONTYPE = ParamSpec[str](
    "transactiontype",
    transaction_type,
    "Only embedded transactions of this type (case-insensitive); repeat for several.",
    ops=EQ_ONLY,
    schema={"type": "string", "enum": sorted(TYPE_NUMBERS)},
    example="CRYPTOTRANSFER",
)
TRANSACTIONS = ParamSpec[bool](
    "transactions",
    values.true_false,
    "Embed the account's transactions (default true).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean", "default": True},
)

PARAMS = ParamSet([LIMIT, ORDER, TIMESTAMP, TRANSACTIONTYPE, TRANSACTIONS])


async def _transactions(
    ctx: AppContext, account: int, window: TimestampWindow | None, names: list[str], *, limit: int, order: Order
) -> tuple[list[dict[str, Any]], int | None]:
    types: list[int] | None = None
    if names:
        types = sorted({number for name in names if (number := TYPE_NUMBERS[name]) is not None})
    if window is None or types == []:
        return [], None
    return await account_transactions_query.fetch_page(ctx, account, window, types, limit=limit, order=order)


async def get_account(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, PARAMS)
    account = await resolve_account(request.path_params[PATH_PARAMETER], ctx)
    stamps = timestamp_window(query.filters(TIMESTAMP), strict=True)
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.DESC)
    names = [item.value for item in query.filters(TRANSACTIONTYPE)]
    row, balance = await (historical(ctx, account, stamps) if query.has(TIMESTAMP) else current(ctx, account))
    if row is None:
        raise NotFound()
    # The transactions after the account, not beside it: with 4 requests in flight per worker, the two statements
    # run together (two tasks, two connections each) cost more CPU and were no faster even at 1 and 8 connections,
    # and slower at 64 and 256 (docs/performance.md); and a missing account now costs no second statement.
    transactions: list[dict[str, Any]] = []
    after: int | None = None
    if query.last(TRANSACTIONS, True):
        transactions, after = await _transactions(ctx, account, stamps.folded(), names, limit=limit, order=order)
    body = render_account(row, balance, delegation_address=ctx.settings.enable_delegation_address)
    link = None
    if after is not None:
        anchor = Anchor(TIMESTAMP.name, format_ns(after) or "", number=after)
        link = next_link(request.scope["path"], query.given, [anchor], order)
    body["transactions"] = transactions
    body["links"] = {"next": link}
    return Page(body, link)


ENDPOINT = Endpoint(
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}",
    handler=get_account,
    params=PARAMS,
    max_age=2,
    summary="Get an account",
    description="One account or contract by id, EVM address or alias: its state (now, or as of timestamp), its "
    "hbar and token balances, and a page of its transactions with links.next to the following page.",
    response_schema=ONE_ACCOUNT_RESPONSE,
    tag="accounts",
    path_params=(OPENAPI_PATH_PARAMETER,),
)
