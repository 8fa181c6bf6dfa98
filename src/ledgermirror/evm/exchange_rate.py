"""Hedera's exchange-rate system contract at 0x168 (upstream-web3.md §3.4): tinycents and tinybars converted at
the rate of file 0.0.112 in force at the call's block (the genesis default, 1 hbar = 12 cents, when the mirror
has none that decodes)."""

from __future__ import annotations

from ledgermirror.evm import abi
from ledgermirror.ledger.evm import keccak256

EXCHANGE_RATE_ADDRESS = (0x168).to_bytes(20, "big")
DEFAULT_RATE = (1, 12)
"""``(hbar_equivalent, cent_equivalent)`` of the consensus node's genesis configuration."""
TINYCENTS_TO_TINYBARS = keccak256(b"tinycentsToTinybars(uint256)")[:4]
TINYBARS_TO_TINYCENTS = keccak256(b"tinybarsToTinycents(uint256)")[:4]


class Unconvertible(Exception):
    """Not a conversion this contract offers, or a rate that cannot convert (a zero equivalent)."""


def exchange_rate_view(data: bytes, rate: tuple[int, int]) -> bytes:
    """The answer of ``tinycentsToTinybars`` or ``tinybarsToTinycents``; raises :class:`Unconvertible`."""
    hbars, cents = rate
    amount = abi.word(data, 0)
    if amount is None or hbars <= 0 or cents <= 0:
        raise Unconvertible()
    if data[:4] == TINYCENTS_TO_TINYBARS:
        return abi.uint(amount * hbars // cents)
    if data[:4] == TINYBARS_TO_TINYCENTS:
        return abi.uint(amount * cents // hbars)
    raise Unconvertible()
