"""EVM addresses of accounts created with an alias."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledgermirror.importer._proto import protos

ADDRESS_LENGTH = 20
_COMPRESSED_KEY_LENGTH = 33


def keccak256(data: bytes) -> bytes:
    from Crypto.Hash import keccak  # pycryptodome

    return bytes(keccak.new(digest_bits=256, data=data).digest())


def address_of_alias(alias: bytes) -> bytes | None:
    """A 20-byte alias is the address; an ECDSA secp256k1 key alias gives keccak(uncompressed key)[-20:]."""
    if len(alias) == ADDRESS_LENGTH:
        return alias
    if not alias:
        return None
    modules = protos()
    try:
        key = modules.basic_types.Key.FromString(alias)
    except modules.decode_error:
        return None
    if key.WhichOneof("key") != "ECDSA_secp256k1" or len(key.ECDSA_secp256k1) != _COMPRESSED_KEY_LENGTH:
        return None
    try:
        point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), bytes(key.ECDSA_secp256k1))
    except ValueError:
        return None
    uncompressed = point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return keccak256(uncompressed[1:])[-ADDRESS_LENGTH:]
