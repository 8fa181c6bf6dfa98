"""The values a detailed contract result shows where its Ethereum transaction has none (or where there is no
Ethereum transaction: a ContractCall or ContractCreate), as the reference does since 0.157 (its pull request
"Implement fee schedule handling in contract processing"; release notes of v0.157.0): ``type`` 0, ``chain_id``
the network's (the reference's ``hiero.mirror.rest.chainId``; ours ``LEDGERMIRROR_CONTRACT_CALL_CHAIN_ID``) and
``gas_price`` the gas price of the fee schedule (file 0.0.111) at the result's consensus timestamp for its
transaction type, in tinybars at the exchange rate (file 0.0.112) then in force, as ``/network/fees`` prices it.
``LEGACY_TYPE`` results keep the rest of their fields. ``LEDGERMIRROR_CONTRACT_RESULT_DEFAULTS=false`` keeps the
older reference's nulls.

:class:`GasPrices` loads each file version a page needs once per request (the page's rows are in time order, so
usually one version of each file).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ledgermirror.api.context import AppContext
from ledgermirror.api.resources.network import system_files
from ledgermirror.api.resources.network.network_fees import (
    TRANSACTION_TYPES,
    effective_rate,
    effective_schedule,
    tinybars,
)
from ledgermirror.ledger.system_files import (
    EXCHANGE_RATE_FILE,
    FEE_SCHEDULE_FILE,
    decode_exchange_rates,
    decode_fee_schedules,
)

CONTRACT_CALL = 6
ETHEREUM_TRANSACTION = 84
DEFAULT_TYPE = 0
"""A result without an Ethereum transaction type: a type 0 (legacy) transaction."""


@dataclass(frozen=True, slots=True)
class Defaults:
    """What a result shows where it has no value of its own (None: not filled)."""

    chain_id: int | None = None
    gas_price: int | None = None
    """Tinybars."""
    type: int | None = None


NONE = Defaults()


T = TypeVar("T")


class _Versions(Generic[T]):
    """The versions of one system file loaded so far: each the newest at or before the time it was loaded for,
    so also the newest for every time from its own timestamp up to that one."""

    def __init__(self, ctx: AppContext, num: int, decode: Callable[[bytes], T]) -> None:
        self._ctx = ctx
        self._num = num
        self._decode = decode
        self._loaded: list[tuple[int, system_files.Loaded[T] | None]] = []

    async def at(self, when: int) -> system_files.Loaded[T] | None:
        for upper, loaded in self._loaded:
            if when <= upper and (loaded is None or loaded.timestamp <= when):
                return loaded
        window = system_files.Window(lower=0, upper=when, bounded=True)
        found = await system_files.load(self._ctx, self._num, window, self._decode)
        self._loaded.append((when, found))
        return found


class GasPrices:
    """Gas prices by time and transaction type, from the fee schedule and exchange rate files (per request)."""

    def __init__(self, ctx: AppContext) -> None:
        self._schedules = _Versions(ctx, FEE_SCHEDULE_FILE, decode_fee_schedules)
        self._rates = _Versions(ctx, EXCHANGE_RATE_FILE, decode_exchange_rates)

    async def at(self, timestamp: int, transaction_type: int) -> int | None:
        """The gas price in tinybars of ``transaction_type`` (ContractCall for a type the schedule does not
        price for gas) at ``timestamp``; None without a schedule or a rate."""
        schedules = await self._schedules.at(timestamp)
        rates = await self._rates.at(timestamp)
        if schedules is None or rates is None:
            return None
        functionality = transaction_type if transaction_type in TRANSACTION_TYPES else CONTRACT_CALL
        schedule = effective_schedule(schedules.content, timestamp)
        rate = effective_rate(rates.content, timestamp)
        for entry in schedule.entries:
            if entry.functionality == functionality and entry.gas is not None:
                return tinybars(entry.gas, rate)
        return None


async def defaults_of(
    ctx: AppContext, prices: GasPrices, timestamp: int, transaction_type: int | None, ethereum: bool
) -> Defaults:
    """The defaults of the result at ``timestamp`` (``transaction_type`` of its transaction when known)."""
    if not ctx.settings.contract_result_defaults:
        return NONE
    kind = ETHEREUM_TRANSACTION if ethereum else (transaction_type or CONTRACT_CALL)
    return Defaults(
        chain_id=ctx.settings.contract_call_chain_id,
        gas_price=await prices.at(timestamp, kind),
        type=DEFAULT_TYPE,
    )
