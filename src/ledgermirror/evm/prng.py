"""Hedera's pseudorandom-number system contract at 0x169 (HIP-351, upstream-web3.md §3.4) as a read-only call sees
it: ``getPseudorandomSeed()`` answers the first 32 bytes of the "n-3 running hash", which the reference's web3
fills with the hash of the record file the call runs at (its ``RunningHashesSingleton``)."""

from __future__ import annotations

from ledgermirror.ledger.evm import keccak256

PRNG_ADDRESS = (0x169).to_bytes(20, "big")
GET_PSEUDORANDOM_SEED = keccak256(b"getPseudorandomSeed()")[:4]


class NoSeed(Exception):
    """Not ``getPseudorandomSeed()`` (the consensus node halts with ``INVALID_OPERATION``), or a hash shorter than
    32 bytes (its entropy cannot be sliced: the same halt)."""


def prng_view(data: bytes, block_hash: bytes) -> bytes:
    """The 32-byte seed of ``getPseudorandomSeed()``: the first 32 bytes of the call's block hash (all zero when
    the block has none, as the consensus node's zero entropy); raises :class:`NoSeed`."""
    if data[:4] != GET_PSEUDORANDOM_SEED or len(block_hash) < 32:
        raise NoSeed()
    return block_hash[:32]
