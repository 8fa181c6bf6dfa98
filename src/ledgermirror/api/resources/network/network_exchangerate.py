"""``GET /api/v1/network/exchangerate``: the current and next hbar exchange rates from system file 0.0.112."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources.network import system_files
from ledgermirror.api.resources.network.system_files import TIMESTAMP
from ledgermirror.ledger.system_files import EXCHANGE_RATE_FILE, Rate, RateSet, decode_exchange_rates
from ledgermirror.ledger.timestamps import format_ns

PARAMS = ParamSet([TIMESTAMP], checks=[system_files.at_most_two_timestamps, system_files.no_ne_timestamp()])

RATE_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        "cent_equivalent": {"type": "integer", "format": "int32", "example": 596987},
        "expiration_time": {"type": ["integer", "null"], "format": "int64", "example": 1649689200},
        "hbar_equivalent": {"type": "integer", "format": "int32", "example": 30000},
    },
    "required": ["cent_equivalent", "expiration_time", "hbar_equivalent"],
}

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "current_rate": RATE_SCHEMA,
        "next_rate": RATE_SCHEMA,
        "timestamp": {"type": "string", "example": "1586567700.453054000"},
    },
    "required": ["current_rate", "next_rate", "timestamp"],
}


def render_rate(rate: Rate | None) -> dict[str, Any] | None:
    if rate is None:
        return None
    return {
        "cent_equivalent": rate.cent_equivalent,
        "expiration_time": rate.expiration_time,
        "hbar_equivalent": rate.hbar_equivalent,
    }


def render(rates: RateSet, timestamp: int) -> dict[str, Any]:
    return {
        "current_rate": render_rate(rates.current),
        "next_rate": render_rate(rates.next),
        "timestamp": format_ns(timestamp),
    }


async def get_exchange_rate(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, PARAMS)
    bounds = system_files.window(query)
    loaded = await system_files.load_or_404(ctx, EXCHANGE_RATE_FILE, bounds, decode_exchange_rates)
    return Page(render(loaded.content, loaded.timestamp))


ENDPOINT = Endpoint(
    path="/api/v1/network/exchangerate",
    handler=get_exchange_rate,
    params=PARAMS,
    max_age=60,
    summary="Get the network exchange rate",
    description="The current and next hbar-to-cent exchange rates of the newest readable version of system "
    "file 0.0.112 (optionally as of a timestamp); `timestamp` is the consensus timestamp of its last chunk.",
    response_schema=RESPONSE_SCHEMA,
    tag="network",
)
