"""The itemized estimate: node fee, network fee, service fee and the high-volume multiplier.

1. Node: the schedule's node base fee plus its extras (``SIGNATURES`` counts the signatures,
   ``PROCESSING_BYTES`` the transaction's bytes); the network fee is the node total times the network
   multiplier. Types marked ``node_network_fee_exempt`` pay neither (multiplier and subtotal 0).
2. Service: the type's base fee plus the extras its schedule entry lists, counted by
   :mod:`ledgermirror.fees.usage`, in the order the consensus node's calculator adds them. A TokenAirdrop
   is priced as a CryptoTransfer of its token transfers, under the CryptoTransfer entry (``PRICED_AS``).
3. An extra is charged for ``max(0, count - included)`` units and listed only when that is above 0.
4. STATE mode only: a body marked ``high_volume`` of a high-volume priced type is scaled by the multiplier of
   its curve at ``high_volume_throttle`` (1000 = 1x): node and service totals ``* m / 1000`` (truncated), and
   the shown bases and unit fees likewise; the network subtotal is then the scaled node total times the
   network multiplier.
5. ``total = node + network + service``. Sums and products saturate at 2^63 - 1, as the network's longs do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ledgermirror.fees import curve
from ledgermirror.fees.schedule import FeeSchedule
from ledgermirror.fees.transaction import UNKNOWN_TYPE, ParsedTransaction, TransactionError
from ledgermirror.fees.usage import PRICED_AS, Counts, State, service_counts
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN


def _sat(value: int) -> int:
    return max(min(value, INT64_MAX), INT64_MIN)


@dataclass(frozen=True, slots=True)
class ExtraFee:
    name: str
    count: int
    included: int
    charged: int
    fee_per_unit: int

    @property
    def subtotal(self) -> int:
        return _sat(self.fee_per_unit * self.charged)

    def scaled(self, multiplier: int) -> ExtraFee:
        per_unit = _sat(self.fee_per_unit * multiplier) // curve.ONE_X
        return ExtraFee(self.name, self.count, self.included, self.charged, per_unit)

    def to_json(self) -> dict[str, Any]:
        return {
            "charged": self.charged,
            "count": self.count,
            "fee_per_unit": self.fee_per_unit,
            "included": self.included,
            "name": self.name,
            "subtotal": self.subtotal,
        }


@dataclass(frozen=True, slots=True)
class Estimate:
    node_base: int
    node_extras: tuple[ExtraFee, ...]
    network_multiplier: int
    network_subtotal: int
    service_base: int
    service_extras: tuple[ExtraFee, ...]
    total: int
    raw_multiplier: int
    """The high-volume multiplier, 1000 = 1x."""
    high_volume: bool = False
    """The body sets its ``high_volume`` flag."""

    def to_json(self) -> dict[str, Any]:
        """The reference's ``FeeEstimateResponse`` (the multiplier shown integer-divided by 1000)."""
        return {
            "high_volume_multiplier": self.raw_multiplier // curve.ONE_X,
            "network": {"multiplier": self.network_multiplier, "subtotal": self.network_subtotal},
            "node": {"base": self.node_base, "extras": [extra.to_json() for extra in self.node_extras]},
            "service": {"base": self.service_base, "extras": [extra.to_json() for extra in self.service_extras]},
            "total": self.total,
        }

    def to_described_json(self, notes: list[str]) -> dict[str, Any]:
        """The form of the seed's interface description, for an estimate made with ``scale=False``: amounts
        before the high-volume multiplier, ``high_volume_multiplier`` in thousandths (price = total x m / 1000)
        and present only when the body sets its high-volume flag, and the ``notes`` caveats."""
        answer = self.to_json()
        del answer["high_volume_multiplier"]
        if self.high_volume:
            answer["high_volume_multiplier"] = self.raw_multiplier
        answer["notes"] = notes
        return dict(sorted(answer.items()))


def _charge(name: str, used: int, included: int, unit_fees: Mapping[str, int]) -> list[ExtraFee]:
    over = max(0, used - included)
    return [ExtraFee(name, used, included, over, unit_fees.get(name, 0))] if over > 0 else []


def _node_extras(
    references: tuple[tuple[str, int], ...], counts: Mapping[str, int], unit_fees: Mapping[str, int]
) -> tuple[ExtraFee, ...]:
    """In the schedule's order of the node's extras."""
    return tuple(
        fee for name, included in references for fee in _charge(name, counts.get(name, 0), included, unit_fees)
    )


def _service_extras(
    references: tuple[tuple[str, int], ...], counts: Counts, unit_fees: Mapping[str, int]
) -> tuple[ExtraFee, ...]:
    """In the calculator's call order (``counts``), each extra only if the type's entry lists it; a tuple count
    is one charge per element, each with the entry's included count."""
    included = dict(references)
    charged: list[ExtraFee] = []
    for name, used in counts.items():
        if name in included:
            for units in used if isinstance(used, tuple) else (used,):
                charged += _charge(name, units, included[name], unit_fees)
    return tuple(charged)


def _total(base: int, extras: tuple[ExtraFee, ...]) -> int:
    total = base
    for extra in extras:
        total = _sat(total + extra.subtotal)
    return total


def calculate(
    schedule: FeeSchedule,
    parsed: ParsedTransaction,
    state: State | None = None,
    throttle: int = 0,
    *,
    scale: bool = True,
) -> Estimate:
    """The estimate; ``state`` is None in INTRINSIC mode. ``scale=False`` finds the high-volume multiplier but
    leaves the amounts before it. Raises :class:`TransactionError` for a type the schedule does not price."""
    service = schedule.services.get(parsed.functionality)
    if service is None:
        raise TransactionError(UNKNOWN_TYPE)
    node_extras: tuple[ExtraFee, ...] = ()
    service_extras: tuple[ExtraFee, ...] = ()
    if service.node_network_exempt:
        node_base, network_multiplier = 0, 0
    else:
        node_counts = {"SIGNATURES": parsed.signatures, "PROCESSING_BYTES": parsed.size}
        node_base = schedule.node_base
        node_extras = _node_extras(schedule.node_extras, node_counts, schedule.unit_fees)
        network_multiplier = schedule.network_multiplier
    priced = schedule.services.get(PRICED_AS.get(parsed.functionality, parsed.functionality), service)
    if service.free:
        service_base = 0
    else:
        service_base = priced.base
        service_extras = _service_extras(priced.extras, service_counts(parsed, state), schedule.unit_fees)
    node_total = _total(node_base, node_extras)
    service_total = _total(service_base, service_extras)

    raw = curve.ONE_X
    if state is not None and parsed.body.high_volume and parsed.functionality in curve.HIGH_VOLUME_PRICED:
        raw = curve.multiplier(service.high_volume, throttle)
    if scale and raw != curve.ONE_X:
        node_total = _sat(node_total * raw) // curve.ONE_X
        service_total = _sat(service_total * raw) // curve.ONE_X
        node_base = _sat(node_base * raw) // curve.ONE_X
        service_base = _sat(service_base * raw) // curve.ONE_X
        node_extras = tuple(extra.scaled(raw) for extra in node_extras)
        service_extras = tuple(extra.scaled(raw) for extra in service_extras)

    network_subtotal = _sat(node_total * network_multiplier)
    total = _sat(_sat(node_total + network_subtotal) + service_total)
    return Estimate(
        node_base,
        node_extras,
        network_multiplier,
        network_subtotal,
        service_base,
        service_extras,
        total,
        raw,
        bool(parsed.body.high_volume),
    )
