"""``GET /api/v1/network/fees``: estimated gas prices in tinybars, from the fee schedule (system file 0.0.111)
priced with the exchange rate (0.0.112).

Both files are read with the same ``timestamp`` window. The *reference time* is the window's upper bound when
the client gave one, else the fee schedule's timestamp; past the current schedule's (or rate's) expiry the next
one applies (a missing expiry counts as already expired). For each contract-related transaction type the first
fee's service-data gas is priced as ``max(gas // 1000 * hbar_equivalent // cent_equivalent, 1)`` tinybars.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.querystring.common import ORDER
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources.network import system_files
from ledgermirror.api.resources.network.system_files import TIMESTAMP
from ledgermirror.ledger.system_files import (
    EXCHANGE_RATE_FILE,
    FEE_SCHEDULE_FILE,
    Rate,
    RateSet,
    Schedule,
    Schedules,
    decode_exchange_rates,
    decode_fee_schedules,
)
from ledgermirror.ledger.timestamps import format_ns

PARAMS = ParamSet([ORDER, TIMESTAMP], checks=[system_files.at_most_two_timestamps, system_files.no_ne_timestamp()])

TRANSACTION_TYPES = {6: "ContractCall", 7: "ContractCreate", 84: "EthereumTransaction"}
"""The ``HederaFunctionality`` numbers priced by this endpoint, and their names."""

_NANOS = 1_000_000_000
_NO_RATE = Rate(0, 0, None)

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "fees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "gas": {"type": "integer", "format": "int64", "description": "tinybars", "example": 57},
                    "transaction_type": {"type": "string", "enum": sorted(TRANSACTION_TYPES.values())},
                },
                "required": ["gas", "transaction_type"],
            },
        },
        "timestamp": {"type": "string", "example": "1586567700.453054000"},
    },
    "required": ["fees", "timestamp"],
}


def _java_div(dividend: int, divisor: int) -> int:
    """Integer division truncating toward zero, as the reference's ``long`` arithmetic does."""
    quotient = abs(dividend) // abs(divisor)
    return quotient if (dividend < 0) == (divisor < 0) else -quotient


def tinybars(gas: int, rate: Rate) -> int | None:
    """The price of ``gas`` (in thousandths of a tinycent) in tinybars, at least 1; None without a cent rate."""
    if rate.cent_equivalent == 0:
        return None
    tinycents = _java_div(gas, 1000)
    return max(_java_div(tinycents * rate.hbar_equivalent, rate.cent_equivalent), 1)


def effective_schedule(schedules: Schedules, reference: int) -> Schedule:
    current = schedules.current or Schedule((), None)
    if reference > (current.expiry or 0) * _NANOS:
        return schedules.next or Schedule((), None)
    return current


def effective_rate(rates: RateSet, reference: int) -> Rate:
    current = rates.current or _NO_RATE
    if reference > (current.expiration_time or 0) * _NANOS:
        return rates.next or _NO_RATE
    return current


def fees(schedule: Schedule, rate: Rate, order: Order) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for entry in schedule.entries:
        name = TRANSACTION_TYPES.get(entry.functionality)
        if name is None or entry.gas is None:
            continue
        price = tinybars(entry.gas, rate)
        if price is not None:
            found.append({"gas": price, "transaction_type": name})
    found.sort(key=lambda item: str(item["transaction_type"]).lower(), reverse=order is Order.DESC)
    return found


async def get_fees(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, PARAMS)
    order = query.last(ORDER, Order.ASC)
    bounds = system_files.window(query)
    schedules = await system_files.load_or_404(ctx, FEE_SCHEDULE_FILE, bounds, decode_fee_schedules)
    rates = await system_files.load_or_404(ctx, EXCHANGE_RATE_FILE, bounds, decode_exchange_rates)
    reference = bounds.upper if bounds.bounded else schedules.timestamp
    schedule = effective_schedule(schedules.content, reference)
    rate = effective_rate(rates.content, reference)
    return Page({"fees": fees(schedule, rate, order), "timestamp": format_ns(schedules.timestamp)})


ENDPOINT = Endpoint(
    path="/api/v1/network/fees",
    handler=get_fees,
    params=PARAMS,
    max_age=60,
    summary="Get the network fees",
    description="Estimated gas prices in tinybars of ContractCall, ContractCreate and EthereumTransaction, "
    "from the fee schedule (0.0.111) and exchange rate (0.0.112) in effect (optionally as of a timestamp), "
    "sorted by transaction type; `timestamp` is the fee schedule's.",
    response_schema=RESPONSE_SCHEMA,
    tag="network",
)
