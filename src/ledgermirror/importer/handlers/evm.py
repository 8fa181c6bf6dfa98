"""EVM addresses of accounts created with an alias."""

from __future__ import annotations

from ledgermirror.importer._proto import protos
from ledgermirror.ledger.evm import ADDRESS_LENGTH, address_of_compressed_key, keccak256

__all__ = ["ADDRESS_LENGTH", "address_of_alias", "keccak256"]

_COMPRESSED_KEY_LENGTH = 33


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
        return address_of_compressed_key(bytes(key.ECDSA_secp256k1))
    except ValueError:
        return None
