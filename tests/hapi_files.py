"""Contents of system files 0.0.111/0.0.112, built by serialising hiero-sdk-python's HAPI messages; the system
file, exchange-rate and fee tests share them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hiero_sdk_python.hapi.services import basic_types_pb2, exchange_rate_pb2

CORRUPT = bytes.fromhex("0a1008")
"""A length-delimited field 1 of 16 bytes with only one byte present: never decodes."""

RateTuple = tuple[int, int, int | None]


def _fill_rate(target: Any, rate: RateTuple) -> None:
    hbar, cent, expiry = rate
    target.SetInParent()
    target.hbarEquiv = hbar
    target.centEquiv = cent
    if expiry is not None:
        target.expirationTime.seconds = expiry


def rate_file(
    current: RateTuple | None = (30000, 450041, 1651762800), nxt: RateTuple | None = (30000, 435305, 1651766400)
) -> bytes:
    """A serialised ``ExchangeRateSet``; ``(hbar, cent, expiration seconds or None)`` per rate or None."""
    message = exchange_rate_pb2.ExchangeRateSet()
    if current is not None:
        _fill_rate(message.currentRate, current)
    if nxt is not None:
        _fill_rate(message.nextRate, nxt)
    return bytes(message.SerializeToString())


ScheduleSpec = tuple[Sequence[tuple[int, int | None]], int | None]
"""``([(functionality, gas or None for a fee without service data), ...], expiry seconds or None)``."""


def _fill_schedule(target: Any, spec: ScheduleSpec) -> None:
    entries, expiry = spec
    target.SetInParent()
    for functionality, gas in entries:
        item = target.transactionFeeSchedule.add()
        item.hederaFunctionality = functionality
        fee = item.fees.add()
        if gas is None:
            fee.nodedata.constant = 1
        else:
            fee.servicedata.gas = gas
    if expiry is not None:
        target.expiryTime.seconds = expiry


def fee_file(current: ScheduleSpec | None, nxt: ScheduleSpec | None = None) -> bytes:
    """A serialised ``CurrentAndNextFeeSchedule``."""
    message = basic_types_pb2.CurrentAndNextFeeSchedule()
    if current is not None:
        _fill_schedule(message.currentFeeSchedule, current)
    if nxt is not None:
        _fill_schedule(message.nextFeeSchedule, nxt)
    return bytes(message.SerializeToString())
