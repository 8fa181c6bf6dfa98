"""EVM helpers of the simulator: RLP encoding and secp256k1 keys (Keccak-256 and addresses come from
``ledger/evm.py``) with their EVM addresses. Keys are real curve points derived from the PRNG with
``cryptography``, so an address is the one its key gives."""

from __future__ import annotations

import random
from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledgermirror.ledger.evm import address_of_key, keccak256

__all__ = ["RlpItem", "ecdsa_key", "keccak256", "rlp"]

_SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


RlpItem = bytes | int | Sequence["RlpItem"]


def rlp(item: RlpItem) -> bytes:
    """Recursive length prefix encoding of bytes, non-negative integers (big-endian, no leading zeros) and
    lists."""
    if isinstance(item, int):
        item = item.to_bytes((item.bit_length() + 7) // 8, "big")
    if isinstance(item, bytes):
        if len(item) == 1 and item[0] < 0x80:
            return item
        return _length(len(item), 0x80) + item
    payload = b"".join(rlp(element) for element in item)
    return _length(len(payload), 0xC0) + payload


def _length(length: int, offset: int) -> bytes:
    if length < 56:
        return bytes((offset + length,))
    encoded = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes((offset + 55 + len(encoded),)) + encoded


def ecdsa_key(rng: random.Random) -> tuple[bytes, bytes]:
    """(compressed public key, EVM address) of a fresh secp256k1 key."""
    private = ec.derive_private_key(rng.randrange(1, _SECP256K1_ORDER), ec.SECP256K1())
    public = private.public_key()
    compressed = public.public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
    return compressed, address_of_key(public)
