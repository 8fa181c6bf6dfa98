"""The HIP-1313 high-volume price multiplier (1000 = 1x) from a utilization in basis points (10000 = 100%)."""

from __future__ import annotations

from ledgermirror.fees.schedule import VariableRate

ONE_X = 1000
MAX_UTILIZATION = 10_000

HIGH_VOLUME_PRICED = frozenset(
    {
        "CryptoCreate",
        "ConsensusCreateTopic",
        "ScheduleCreate",
        "CryptoApproveAllowance",
        "FileCreate",
        "FileAppend",
        "ContractCreate",
        "HookStore",
        "TokenAssociateToAccount",
        "TokenAirdrop",
        "TokenClaimAirdrop",
        "TokenMint",
        "TokenCreate",
    }
)
"""The transaction types whose price rises with high-volume throttle utilization."""


def multiplier(rate: VariableRate | None, utilization: int) -> int:
    """The raw multiplier, between 1000 and ``max(max_multiplier, 1000)``; 1000 when there is no rate.

    Without curve points it rises linearly from (0, 1x) to (10000, max). With points (sorted by utilization,
    each raised to at least 1x) it interpolates between the points around ``utilization`` with integer
    division, holding the first point's value below it and the last point's above it.
    """
    if rate is None:
        return ONE_X
    top = max(rate.max_multiplier, ONE_X)
    used = min(max(utilization, 0), MAX_UTILIZATION)
    if not rate.points:
        raw = ONE_X + (top - ONE_X) * used // MAX_UTILIZATION
    else:
        points = sorted((at, max(value, ONE_X)) for at, value in rate.points)
        raw = _interpolate(points, used)
    return max(ONE_X, min(raw, top))


def _interpolate(points: list[tuple[int, int]], used: int) -> int:
    if len(points) == 1:
        return points[0][1]
    lower = next((point for point in reversed(points) if point[0] <= used), None)
    upper = next((point for point in points if point[0] >= used), None)
    if lower is None:
        return points[0][1]
    if upper is None:
        return points[-1][1]
    (lower_at, lower_value), (upper_at, upper_value) = lower, upper
    if lower_at == upper_at:
        return lower_value
    return lower_value + _truncating_div((upper_value - lower_value) * (used - lower_at), upper_at - lower_at)


def _truncating_div(numerator: int, denominator: int) -> int:
    """Integer division rounding toward zero, as in Java."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient
