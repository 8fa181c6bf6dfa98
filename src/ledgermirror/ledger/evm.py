"""EVM hashing and addresses: Keccak-256 (``pycryptodome``) and the address of a secp256k1 public key."""

from __future__ import annotations

from Crypto.Hash import keccak
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ADDRESS_LENGTH = 20
BLOOM_BYTES = 256
_BLOOM_BITS = 2047


def keccak256(data: bytes) -> bytes:
    """Keccak-256 (the EVM's hash, not SHA3-256).

    >>> keccak256(b"").hex()[:16]
    'c5d2460186f7233c'
    """
    return bytes(keccak.new(digest_bits=256, data=data).digest())


def log_bloom(address: bytes, topics: list[bytes]) -> bytes:
    """The 2048-bit bloom of one log: for the address and each topic (as 32-byte words), three bits, each the
    low 11 bits of one of the first three byte pairs of its Keccak-256."""
    bloom = 0
    for value in (address, *(topic.rjust(32, b"\0") for topic in topics)):
        digest = keccak256(value)
        for index in (0, 2, 4):
            bloom |= 1 << ((digest[index] << 8 | digest[index + 1]) & _BLOOM_BITS)
    return bloom.to_bytes(BLOOM_BYTES, "big")


def address_of_key(public_key: ec.EllipticCurvePublicKey) -> bytes:
    """The 20-byte EVM address of a secp256k1 key: the last 20 bytes of keccak(uncompressed point without its
    0x04 prefix)."""
    uncompressed = public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return keccak256(uncompressed[1:])[-ADDRESS_LENGTH:]


def address_of_compressed_key(compressed: bytes) -> bytes:
    """The EVM address of a 33-byte compressed secp256k1 key; ``ValueError`` if it is not a curve point."""
    return address_of_key(ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), compressed))
