"""The gas Hedera's system contracts charge for a read, as the consensus node's ``SystemContractGasCalculator``
computes it for every view (``viewGasRequirement``, with ``contracts.systemContract.canonicalViewGas.enabled``,
true by default): the canonical price of the ``TOKEN_INFO`` dispatch (HAPI ``TokenGetInfo``, $0.0001 in its
``canonical-prices.json``) in tinycents, turned into gas at the fixed price of $0.000_000_0852 per gas, rounded as
its ``gasRequirementFromTinycents`` rounds, plus a fifth, and never below 100 gas.

No exchange rate enters a view's price (both sides are in tinycents); the fee schedule matters only for writes,
which are not built.
"""

from __future__ import annotations

TINYCENTS_PER_USD = 100 * 100_000_000
"""The consensus node's ``CanonicalDispatchPrices.USD_TO_TINYCENTS``."""
FEE_SCHEDULE_UNITS_PER_TINYCENT = 1000
FIXED_TINYCENT_GAS_PRICE = 852_000
"""$0.000_000_0852 per gas, in fee-schedule units (thousandths of a tinycent)."""
MINIMUM_VIEW_GAS = 100
"""The consensus node's ``FIXED_VIEW_GAS_COST``, the floor of a view (and its whole price without canonical view
gas)."""
TOKEN_INFO_USD = (1, 10_000)
"""The canonical price of ``TokenGetInfo`` in dollars as a fraction: $0.0001."""


def gas_from_tinycents(tinycents: int, gas_price: int) -> int:
    """``gasRequirementFromTinycents``: ``(price + gas price - 1) * 1000 / gas price`` (integer division, the
    addition rounding before the scaling, as the consensus node writes it), plus a fifth of that."""
    gas = (tinycents + gas_price - 1) * FEE_SCHEDULE_UNITS_PER_TINYCENT // gas_price
    return gas + gas // 5


def view_gas() -> int:
    """The gas of one system-contract view: 2,607 with the canonical price of ``TokenGetInfo``."""
    numerator, denominator = TOKEN_INFO_USD
    tinycents = TINYCENTS_PER_USD * numerator // denominator
    return max(MINIMUM_VIEW_GAS, gas_from_tinycents(tinycents, FIXED_TINYCENT_GAS_PRICE))


VIEW_GAS = view_gas()
EXCHANGE_RATE_GAS = 100
"""The exchange-rate system contract's price per call (the consensus node's
``contracts.precompile.exchangeRateGasCost``, 100 by default)."""
PRNG_GAS = 100
"""What ``getPseudorandomSeed()`` is charged here: the consensus node prices it from the fee schedule's
``UtilPrng`` (its ``PrngSystemContract.calculateGas``), which is not reproduced."""
