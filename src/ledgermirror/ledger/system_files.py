"""System files: their numbers, and the contents of 0.0.111 (fee schedules) and 0.0.112 (exchange rates) decoded
from their protobuf bytes into plain values. Pure bytes -> values: which version of a file to read is the
caller's business (``api/resources/network/system_files.py``).

The decoders import the HAPI classes on first use (:mod:`ledgermirror.ledger.protobuf`); async callers await
:func:`ledgermirror.ledger.protobuf.preload` first so that import does not block their event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.ledger.protobuf import hapi

ADDRESS_BOOK_FILE = 101
"""0.0.101: the address book with service endpoints."""
NODE_DETAILS_FILE = 102
"""0.0.102: the node details address book."""
FEE_SCHEDULE_FILE = 111
"""0.0.111: ``CurrentAndNextFeeSchedule``."""
EXCHANGE_RATE_FILE = 112
"""0.0.112: ``ExchangeRateSet``."""
SIMPLE_FEE_SCHEDULE_FILE = 113
"""0.0.113: the simple fee schedule (``org.hiero.hapi.support.fees.FeeSchedule``), see ``fees/schedule.py``."""


class Undecodable(ValueError):
    """The contents are not a complete message of the expected type."""


@dataclass(frozen=True, slots=True)
class Rate:
    hbar_equivalent: int
    cent_equivalent: int
    expiration_time: int | None
    """Seconds since the epoch; None when the message has no expiration time."""


@dataclass(frozen=True, slots=True)
class RateSet:
    current: Rate | None
    next: Rate | None


@dataclass(frozen=True, slots=True)
class FeeEntry:
    functionality: int
    """The ``HederaFunctionality`` number."""
    gas: int | None
    """``fees[0].servicedata.gas``; None when there is no fee or the first has no service data."""


@dataclass(frozen=True, slots=True)
class Schedule:
    entries: tuple[FeeEntry, ...]
    expiry: int | None
    """Seconds since the epoch; None when the schedule has no expiry time."""


@dataclass(frozen=True, slots=True)
class Schedules:
    current: Schedule | None
    next: Schedule | None


def _seconds(message: Any, field: str) -> int | None:
    return int(getattr(message, field).seconds) if message.HasField(field) else None


def _rate(message: Any, field: str) -> Rate | None:
    if not message.HasField(field):
        return None
    rate = getattr(message, field)
    return Rate(int(rate.hbarEquiv), int(rate.centEquiv), _seconds(rate, "expirationTime"))


def decode_exchange_rates(data: bytes) -> RateSet:
    """``proto.ExchangeRateSet`` -> :class:`RateSet`; raises :class:`Undecodable`."""
    classes = hapi()
    try:
        message = classes.ExchangeRateSet.FromString(data)
    except classes.DecodeError as error:
        raise Undecodable(str(error)) from None
    return RateSet(_rate(message, "currentRate"), _rate(message, "nextRate"))


def _schedule(message: Any, field: str) -> Schedule | None:
    if not message.HasField(field):
        return None
    schedule = getattr(message, field)
    entries = []
    for item in schedule.transactionFeeSchedule:
        first = item.fees[0] if len(item.fees) else None
        gas = int(first.servicedata.gas) if first is not None and first.HasField("servicedata") else None
        entries.append(FeeEntry(int(item.hederaFunctionality), gas))
    return Schedule(tuple(entries), _seconds(schedule, "expiryTime"))


def decode_fee_schedules(data: bytes) -> Schedules:
    """``proto.CurrentAndNextFeeSchedule`` -> :class:`Schedules`; raises :class:`Undecodable`."""
    classes = hapi()
    try:
        message = classes.CurrentAndNextFeeSchedule.FromString(data)
    except classes.DecodeError as error:
        raise Undecodable(str(error)) from None
    return Schedules(_schedule(message, "currentFeeSchedule"), _schedule(message, "nextFeeSchedule"))
