"""The HIP-1313 high-volume multiplier: the curve alone, and applied by the calculator."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from tests.fees.builders import body, key, signed

from ledgermirror.fees import schedule
from ledgermirror.fees.calculator import calculate
from ledgermirror.fees.curve import multiplier
from ledgermirror.fees.schedule import VariableRate
from ledgermirror.fees.transaction import parse
from ledgermirror.fees.usage import State

CURVE = VariableRate(200_000, ((5000, 6000), (2, 4000), (10_000, 200_000)))


@pytest.mark.parametrize(
    ("utilization", "expected"),
    [
        (0, 4000),  # below the first point: the first point's multiplier (not 1x)
        (1, 4000),
        (2, 4000),  # on a point
        (5000, 6000),
        (2501, 4000 + 2000 * 2499 // 4998),  # between points, integer division
        (7500, 6000 + 194_000 * 2500 // 5000),
        (10_000, 200_000),
        (20_000, 200_000),  # clamped to 10000
        (-5, 4000),  # clamped to 0
    ],
)
def test_piecewise_curve(utilization: int, expected: int) -> None:
    assert multiplier(CURVE, utilization) == expected


def test_above_the_last_point_holds_the_last_multiplier() -> None:
    rate = VariableRate(50_000, ((0, 1000), (100, 3000)))
    assert multiplier(rate, 100) == 3000
    assert multiplier(rate, 9000) == 3000


def test_single_point() -> None:
    rate = VariableRate(10_000, ((5000, 7000),))
    assert [multiplier(rate, u) for u in (0, 5000, 10_000)] == [7000, 7000, 7000]


def test_points_below_one_x_are_raised_and_results_capped() -> None:
    assert multiplier(VariableRate(0, ((0, 10), (10_000, 500))), 5000) == 1000
    assert multiplier(VariableRate(2000, ((0, 1000), (10_000, 9000))), 10_000) == 2000  # capped at max
    assert multiplier(VariableRate(10_000, ((0, 9000), (10_000, 1000))), 5000) == 5000  # falling curve


def test_no_curve_is_linear_from_one_x_to_max() -> None:
    rate = VariableRate(100_000)
    assert [multiplier(rate, u) for u in (0, 5000, 10_000, 3)] == [
        1000,
        50_500,
        100_000,
        1000 + 99_000 * 3 // 10_000,
    ]
    assert multiplier(VariableRate(0), 10_000) == 1000  # max below 1x means 1x


def test_no_rate_is_one_x() -> None:
    assert multiplier(None, 10_000) == 1000


def _topic_schedule() -> schedule.FeeSchedule:
    """The reference's test schedule: ConsensusCreateTopic with max_multiplier 100000 and no curve."""
    default = schedule.default()
    services = dict(default.services)
    services["ConsensusCreateTopic"] = dataclasses.replace(
        services["ConsensusCreateTopic"], high_volume=VariableRate(100_000)
    )
    return dataclasses.replace(default, services=MappingProxyType(services))


def _topic_create(high_volume: bool) -> bytes:
    message = body()
    message.consensusCreateTopic.adminKey.CopyFrom(key())
    message.high_volume = high_volume
    return signed(message, 1)


@pytest.mark.parametrize(
    ("high_volume", "state", "throttle", "raw"),
    [
        (False, None, 10_000, 1000),
        (False, State(), 10_000, 1000),
        (True, None, 10_000, 1000),
        (True, State(), 10_000, 100_000),
        (True, State(), 5000, 50_500),
        (True, State(), 0, 1000),
    ],
)
def test_reference_high_volume_cases(high_volume: bool, state: State | None, throttle: int, raw: int) -> None:
    result = calculate(_topic_schedule(), parse(_topic_create(high_volume)), state, throttle)
    assert result.raw_multiplier == raw
    assert result.to_json()["high_volume_multiplier"] == raw // 1000


def test_multiplier_scales_totals_bases_and_unit_fees() -> None:
    plain = calculate(_topic_schedule(), parse(_topic_create(True)), None)
    scaled = calculate(_topic_schedule(), parse(_topic_create(True)), State(), 10_000)
    assert scaled.node_base == plain.node_base * 100
    assert scaled.service_base == plain.service_base * 100
    assert [extra.fee_per_unit for extra in scaled.service_extras] == [
        extra.fee_per_unit * 100 for extra in plain.service_extras
    ]
    assert scaled.network_subtotal == plain.network_subtotal * 100
    assert scaled.total == plain.total * 100


def test_genesis_curve_applies_its_first_point_at_zero_throttle() -> None:
    message = body()
    message.cryptoCreateAccount.key.CopyFrom(key())
    message.high_volume = True
    result = calculate(schedule.default(), parse(signed(message, 1)), State(), 0)
    assert result.raw_multiplier == 4000
    assert result.total == 500_000_000 * 4
