"""``GET /api/v1/network/supply``: released and total hbar supply, now or as of a ``timestamp``.

Released supply is the fixed total minus what the unreleased-supply (treasury) accounts hold. Without a
timestamp that is their current ``entity.balance``; with one, each account's latest ``account_balance``
snapshot inside the requested window, the window's lower end raised to the start of the month before its upper
end (as the reference does, so the search never reads more than two monthly partitions). The accounts' id
ranges are constants of the deployment (shard and realm), written into the statements as literals, so that
PostgreSQL plans each statement once per connection (bound, they were planned again on every request: most of
its cost). ``q=totalcoins`` or ``q=circulating`` answers one number as plain text, in hbars with 8 decimals.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import RANGE_OPS
from ledgermirror.api.querystring.params import Filter, ParamSet, ParamSpec
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.network.system_files import (
    NE_NOT_SUPPORTED,
    at_most_two_timestamps,
    no_ne_timestamp,
)
from ledgermirror.db.sql import Statement, template, with_constants
from ledgermirror.ledger.supply import TOTAL_SUPPLY, UNRELEASED_SUPPLY_NUMS
from ledgermirror.ledger.timestamps import format_ns, month_start

_TINYBARS_PER_HBAR_DIGITS = 8

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The supply as of this consensus timestamp (seconds.nanoseconds): eq/lte, lt, gt or gte; "
    "at most two values, combined with AND.",
    ops=RANGE_OPS,
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
    max_count=2,
)
Q = ParamSpec[str](
    "q",
    values.choice("totalcoins", "circulating"),
    "Answer one number as text/plain, in hbars with 8 decimals: the total supply (totalcoins) or the "
    "released supply (circulating). Case-insensitive.",
    ops=frozenset(),
    single=True,
    schema={"type": "string", "enum": ["totalcoins", "circulating"]},
)


PARAMS = ParamSet(
    [Q, TIMESTAMP],
    checks=[at_most_two_timestamps, no_ne_timestamp("Invalid parameter: " + NE_NOT_SUPPORTED)],
)


def _any_range(column: str) -> str:
    """``column`` within one of the unreleased-supply ranges, inside the span from the first range's start to the
    last one's end (they are in ascending order): PostgreSQL may then read that span in one index range scan
    (4 buffers on ``medium``, against 25 for a bitmap of one index scan per range) and choose by its estimates."""
    last = len(UNRELEASED_SUPPLY_NUMS) - 1
    ranges = " or ".join(f"{column} between {{low{index}}} and {{high{index}}}" for index in range(last + 1))
    return f"{column} between {{low0}} and {{high{last}}} and ({ranges})"


def _with_ranges(ctx: AppContext, text: str) -> str:
    """``text`` with the deployment's supply ranges written in, composed once per application."""
    composed = ctx.supply_statements.get(text)
    if composed is None:
        composed = ctx.supply_statements[text] = with_constants(text, **ctx.supply_ranges)
    return composed


_RANGE_ROWS = ", ".join(
    f"({{low{index}}}::bigint, {{high{index}}}::bigint)" for index in range(len(UNRELEASED_SUPPLY_NUMS))
)

_CURRENT = f"""select sum(balance) as unreleased, max(balance_timestamp) as consensus_timestamp
from entity
where {_any_range("id")}"""

_HISTORICAL = f"""select sum(snapshot.balance) as unreleased,
    max(snapshot.consensus_timestamp) as consensus_timestamp
from (values {_RANGE_ROWS}) as supply_range(low, high)
cross join lateral generate_series(supply_range.low, supply_range.high) as account(id)
cross join lateral (
    select balance, consensus_timestamp
    from account_balance
    where account_id = account.id and consensus_timestamp >= {{lower}} and consensus_timestamp <= {{upper}}
    order by consensus_timestamp desc
    limit 1
) as snapshot"""


def window(filters: list[Filter[int]]) -> tuple[int, int]:
    """The inclusive ``[lower, upper]`` nanosecond window; an equality means "as of" (``lte``)."""
    lower, upper = inclusive_bounds(filters, eq_is_upper=True)
    if lower > upper:
        raise BadRequest("Lower timestamp cannot be higher than upper timestamp")
    return max(lower, month_start(upper, months_back=1)), upper


def hbars(tinybars: int) -> str:
    """Tinybars as hbars with exactly 8 decimals, formed textually.

    >>> hbars(5_000_000_000_000_000_000), hbars(100_000_000), hbars(1), hbars(0)
    ('50000000000.00000000', '1.00000000', '0.00000001', '0.00000000')
    """
    sign = "-" if tinybars < 0 else ""
    digits = str(abs(tinybars)).rjust(_TINYBARS_PER_HBAR_DIGITS + 1, "0")
    return f"{sign}{digits[:-_TINYBARS_PER_HBAR_DIGITS]}.{digits[-_TINYBARS_PER_HBAR_DIGITS:]}"


def render(unreleased: int, timestamp: int) -> dict[str, Any]:
    return {
        "released_supply": str(TOTAL_SUPPLY - unreleased),
        "timestamp": format_ns(timestamp),
        "total_supply": str(TOTAL_SUPPLY),
    }


async def get_supply(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, PARAMS)
    if query.has(TIMESTAMP):
        lower, upper = window(query.filters(TIMESTAMP))
        rows = await ctx.database.fetch(template(_with_ranges(ctx, _HISTORICAL), lower=lower, upper=upper))
    else:
        rows = await ctx.database.fetch(Statement(_with_ranges(ctx, _CURRENT), ()))
    row = rows[0] if rows else None
    if row is None or not row["consensus_timestamp"]:
        raise NotFound()
    unreleased = int(row["unreleased"] or 0)
    answer = render(unreleased, int(row["consensus_timestamp"]))
    wanted = query.last(Q, None)
    if wanted == "TOTALCOINS":
        return Page({}, text=hbars(TOTAL_SUPPLY))
    if wanted == "CIRCULATING":
        return Page({}, text=hbars(TOTAL_SUPPLY - unreleased))
    return Page(answer)


SUPPLY_RESPONSE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "released_supply": {"type": "string", "description": "tinybars", "example": "3999999999999999949"},
        "timestamp": {"type": "string", "pattern": r"^\d{1,10}\.\d{9}$", "example": "1700000000.000000000"},
        "total_supply": {"type": "string", "description": "tinybars", "example": "5000000000000000000"},
    },
    "required": ["released_supply", "timestamp", "total_supply"],
}

ENDPOINT = Endpoint(
    path="/api/v1/network/supply",
    handler=get_supply,
    params=PARAMS,
    max_age=60,
    summary="Get the network supply",
    description="Released and total hbar supply in tinybars, now or as of a timestamp. With q=totalcoins or "
    "q=circulating the answer is text/plain: one amount in hbars with 8 decimals.",
    response_schema=SUPPLY_RESPONSE,
    text_response_schema={"type": "string", "pattern": r"^\d+\.\d{8}$", "example": "50000000000.00000000"},
    tag="network",
)
