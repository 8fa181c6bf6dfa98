"""The simple fee schedule (``org.hiero.hapi.support.fees.FeeSchedule``) as plain typed values.

:func:`decode` reads the protobuf bytes of file 0.0.113; :func:`default` builds the shipped default
(``default-schedule.json`` in this package, decoded the same way). Extra and transaction-type names are the
protobuf enum names (``SIGNATURES``, ``CryptoCreate``); entries whose enum value this SDK does not know are
skipped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from google.protobuf import json_format

from ledgermirror.ledger.protobuf import hapi

DEFAULT_SOURCE = "default"


class UndecodableSchedule(ValueError):
    """The bytes are not a usable ``FeeSchedule``."""


@dataclass(frozen=True, slots=True)
class VariableRate:
    """``VariableRateDefinition``: the high-volume multiplier cap and its piecewise-linear curve (1000 = 1x)."""

    max_multiplier: int
    points: tuple[tuple[int, int], ...] = ()
    """``(utilization_basis_points, multiplier)`` in the order given; empty when there is no curve."""


@dataclass(frozen=True, slots=True)
class ServiceFee:
    """``ServiceFeeDefinition``: the price of one transaction type."""

    name: str
    base: int
    extras: tuple[tuple[str, int], ...] = ()
    """``(extra name, included count)`` in schedule order."""
    high_volume: VariableRate | None = None
    free: bool = False
    node_network_exempt: bool = False


@dataclass(frozen=True, slots=True)
class FeeSchedule:
    node_base: int
    node_extras: tuple[tuple[str, int], ...]
    network_multiplier: int
    unit_fees: Mapping[str, int]
    """The global ``extras`` table: extra name -> fee per unit."""
    services: Mapping[str, ServiceFee]
    """Transaction type (``HederaFunctionality`` name) -> its definition."""
    source: str
    """``default``, or ``0.0.113@<seconds.nanos>`` of the file version used."""


def _services(entries: list[ServiceFee]) -> Mapping[str, ServiceFee]:
    services: dict[str, ServiceFee] = {}
    for entry in entries:
        services.setdefault(entry.name, entry)  # the first definition of a type wins
    return MappingProxyType(services)


@functools.cache
def default() -> FeeSchedule:
    """The shipped default schedule: ``default-schedule.json`` (the genesis simple-fee schedule, the values the
    reference's figures agree with), read through the same decoder as file 0.0.113."""
    data = json.loads((resources.files("ledgermirror.fees") / "default-schedule.json").read_text())
    message = json_format.ParseDict(data, hapi().SimpleFeeSchedule(), ignore_unknown_fields=True)
    return decode(message.SerializeToString(), DEFAULT_SOURCE)


def _enum_name(enum: Any, value: int) -> str | None:
    try:
        return str(enum.Name(value))
    except ValueError:
        return None


def _references(enum: Any, items: Any) -> tuple[tuple[str, int], ...]:
    named = ((_enum_name(enum, item.name), int(item.included_count)) for item in items)
    return tuple((name, count) for name, count in named if name is not None)


def _variable_rate(definition: Any) -> VariableRate | None:
    if not definition.HasField("high_volume_rates"):
        return None
    rates = definition.high_volume_rates
    points = tuple(
        (int(point.utilization_basis_points), int(point.multiplier))
        for point in rates.pricing_curve.piecewise_linear.points
    )
    return VariableRate(int(rates.max_multiplier), points)


def decode(data: bytes, source: str) -> FeeSchedule:
    """``FeeSchedule`` protobuf bytes -> :class:`FeeSchedule`; raises :class:`UndecodableSchedule`.

    A schedule without a node fee or without any priced transaction type is not usable either.
    """
    classes = hapi()
    try:
        message = classes.SimpleFeeSchedule.FromString(data)
    except classes.DecodeError as error:
        raise UndecodableSchedule(str(error)) from None
    extra_enum = classes.Extra
    function_enum = classes.HederaFunctionality
    entries = []
    for service in message.services:
        for definition in service.schedule:
            name = _enum_name(function_enum, definition.name)
            if name is None or name == "NONE":
                continue
            entries.append(
                ServiceFee(
                    name,
                    int(definition.base_fee),
                    _references(extra_enum, definition.extras),
                    _variable_rate(definition),
                    bool(definition.free),
                    bool(definition.node_network_fee_exempt),
                )
            )
    if not message.HasField("node") or not entries:
        raise UndecodableSchedule("no node fee or no priced transaction type")
    unit_fees: dict[str, int] = {}
    for extra in message.extras:
        extra_name = _enum_name(extra_enum, extra.name)
        if extra_name is not None:
            unit_fees.setdefault(extra_name, int(extra.fee))
    return FeeSchedule(
        node_base=int(message.node.base_fee),
        node_extras=_references(extra_enum, message.node.extras),
        network_multiplier=int(message.network.multiplier),
        unit_fees=MappingProxyType(unit_fees),
        services=_services(entries),
        source=source,
    )
