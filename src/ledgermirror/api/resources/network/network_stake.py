"""``GET /api/v1/network/stake``: the latest ``network_stake`` row, rendered as the reference renders it.

The two fee fractions are where the reference is peculiar: numerator / denominator rounded half-up to 9 decimal
places, then narrowed to a 32-bit float and printed with the fewest digits that identify that float (1/3 is
``0.33333334``, not ``0.333333333``). :func:`fee_fraction` reproduces this exactly.
"""

from __future__ import annotations

import struct
from fractions import Fraction
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.db.sql import Column, Order, Select
from ledgermirror.ledger.timestamps import format_ns

PARAMS = ParamSet([])

_SELECT = """select max_stake_rewarded, max_staking_reward_rate_per_hbar, max_total_reward,
    node_reward_fee_numerator, node_reward_fee_denominator, reserved_staking_rewards, reward_balance_threshold,
    stake_total, staking_period, staking_period_duration, staking_periods_stored,
    staking_reward_fee_numerator, staking_reward_fee_denominator, staking_reward_rate, staking_start_threshold,
    unreserved_staking_reward_balance
from network_stake"""
_CONSENSUS_TIMESTAMP = Column("consensus_timestamp")

DAY_NS = 86_400 * 1_000_000_000
_NANOS_PER_UNIT = 10**9


def staking_period(end_of_period: int) -> dict[str, str | None]:
    """The staking day that starts one nanosecond after ``end_of_period`` and lasts 24 hours."""
    start = end_of_period + 1
    return {"from": format_ns(start), "to": format_ns(start + DAY_NS)}


def fee_fraction(numerator: int, denominator: int) -> float:
    """``numerator / denominator`` as the reference prints it; ``0.0`` when the denominator is 0.

    >>> fee_fraction(3, 1000), fee_fraction(1, 3), fee_fraction(1, 10_000), fee_fraction(5, 5)
    (0.003, 0.33333334, 0.0001, 1.0)
    """
    if denominator == 0:
        return 0.0
    scaled = Fraction(numerator * _NANOS_PER_UNIT, denominator)
    sign = -1 if scaled < 0 else 1
    rounded = sign * int(abs(scaled) + Fraction(1, 2))  # half-up: halves go away from zero
    return _shortest_float32(Fraction(rounded, _NANOS_PER_UNIT))


def _to_float32(value: float) -> float:
    narrowed: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return narrowed


def _nearest_float32(exact: Fraction) -> float:
    """The 32-bit float nearest to ``exact`` (ties to even), by exact comparison of the neighbours."""
    if exact == 0:
        return 0.0
    guess = _to_float32(float(exact))
    bits = struct.unpack("<i", struct.pack("<f", guess))[0]
    candidates = [guess]
    for step in (-1, 1):
        neighbour = struct.unpack("<f", struct.pack("<i", bits + step))[0]
        candidates.append(neighbour)
    return min(candidates, key=lambda value: (abs(Fraction(value) - exact), _odd_mantissa(value)))


def _odd_mantissa(value: float) -> int:
    return int(struct.unpack("<i", struct.pack("<f", value))[0] & 1)


def _shortest_float32(exact: Fraction) -> float:
    """The float32 nearest to ``exact``, as the double of its shortest round-tripping decimal text."""
    target = _nearest_float32(exact)
    if target == 0.0:
        return 0.0
    for digits in range(1, 10):
        text = f"{target:.{digits - 1}e}"
        if _to_float32(float(text)) == target:
            return float(text)
    return target


def render(row: Any) -> dict[str, Any]:
    return {
        "max_stake_rewarded": row["max_stake_rewarded"],
        "max_staking_reward_rate_per_hbar": row["max_staking_reward_rate_per_hbar"],
        "max_total_reward": row["max_total_reward"],
        "node_reward_fee_fraction": fee_fraction(
            row["node_reward_fee_numerator"], row["node_reward_fee_denominator"]
        ),
        "reserved_staking_rewards": row["reserved_staking_rewards"],
        "reward_balance_threshold": row["reward_balance_threshold"],
        "stake_total": row["stake_total"],
        "staking_period": staking_period(row["staking_period"]),
        "staking_period_duration": row["staking_period_duration"],
        "staking_periods_stored": row["staking_periods_stored"],
        "staking_reward_fee_fraction": fee_fraction(
            row["staking_reward_fee_numerator"], row["staking_reward_fee_denominator"]
        ),
        "staking_reward_rate": row["staking_reward_rate"],
        "staking_start_threshold": row["staking_start_threshold"],
        "unreserved_staking_reward_balance": row["unreserved_staking_reward_balance"],
    }


async def get_stake(request: Request, ctx: AppContext) -> Page:
    query_of(request, ctx, PARAMS)
    rows = await ctx.database.fetch(Select(_SELECT).order_by([_CONSENSUS_TIMESTAMP], Order.DESC).limit(1).build())
    if not rows:
        raise NotFound("No network stake data found")
    return Page(render(rows[0]))


_INT64 = {"type": "integer", "format": "int64"}
_TIMESTAMP = {"type": "string", "pattern": r"^\d{1,10}\.\d{9}$", "example": "1655164800.000000000"}
_FRACTION = {"type": "number", "format": "float", "description": "printed as the reference's 32-bit float"}

STAKE_RESPONSE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "max_stake_rewarded": _INT64,
        "max_staking_reward_rate_per_hbar": _INT64,
        "max_total_reward": _INT64,
        "node_reward_fee_fraction": _FRACTION,
        "reserved_staking_rewards": _INT64,
        "reward_balance_threshold": _INT64,
        "stake_total": _INT64,
        "staking_period": {
            "type": "object",
            "properties": {"from": _TIMESTAMP, "to": _TIMESTAMP},
            "required": ["from", "to"],
        },
        "staking_period_duration": _INT64,
        "staking_periods_stored": _INT64,
        "staking_reward_fee_fraction": _FRACTION,
        "staking_reward_rate": _INT64,
        "staking_start_threshold": _INT64,
        "unreserved_staking_reward_balance": _INT64,
    },
    "required": [
        "max_stake_rewarded",
        "max_staking_reward_rate_per_hbar",
        "max_total_reward",
        "node_reward_fee_fraction",
        "reserved_staking_rewards",
        "reward_balance_threshold",
        "stake_total",
        "staking_period",
        "staking_period_duration",
        "staking_periods_stored",
        "staking_reward_fee_fraction",
        "staking_reward_rate",
        "staking_start_threshold",
        "unreserved_staking_reward_balance",
    ],
}

ENDPOINT = Endpoint(
    path="/api/v1/network/stake",
    handler=get_stake,
    params=PARAMS,
    max_age=60,
    summary="Get network stake information",
    description="The network's stake and reward settings of the latest staking period (404 before the first).",
    response_schema=STAKE_RESPONSE,
    tag="network",
)
