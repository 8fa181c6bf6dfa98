"""Rendering of protobuf-encoded keys as ``{"_type": ..., "key": hex}`` objects, as the reference does."""

from __future__ import annotations

from typing import TypedDict

_IMMUTABLE_SENTINEL = bytes.fromhex("3200")  # an empty KeyList
_ED25519_PREFIXES = (
    bytes.fromhex("1220"),
    bytes.fromhex("32240a221220"),
    bytes.fromhex("2a28080112240a221220"),
)
_ECDSA_PREFIXES = (
    bytes.fromhex("3a21"),
    bytes.fromhex("32250a233a21"),
    bytes.fromhex("2a29080112250a233a21"),
)
_BY_LENGTH: dict[int, tuple[bytes, str]] = {
    **{len(prefix) + 32: (prefix, "ED25519") for prefix in _ED25519_PREFIXES},
    **{len(prefix) + 33: (prefix, "ECDSA_SECP256K1") for prefix in _ECDSA_PREFIXES},
}
"""A simple key's encoded length -> its one possible prefix and type (the six lengths differ): one lookup per
key, on the hot path of every list that shows keys."""


class KeyJson(TypedDict):
    _type: str
    key: str


def render_key(raw: bytes | None) -> KeyJson | None:
    """``None`` for a missing key or the empty-key-list sentinel, else the typed hex form.

    >>> render_key(bytes([1, 1, 1]))
    {'_type': 'ProtobufEncoded', 'key': '010101'}
    """
    if raw is None or raw == _IMMUTABLE_SENTINEL:
        return None
    simple = _BY_LENGTH.get(len(raw))
    if simple is not None and raw.startswith(simple[0]):
        return {"_type": simple[1], "key": raw[len(simple[0]) :].hex()}
    return {"_type": "ProtobufEncoded", "key": raw.hex()}


_ED25519_DER_PREFIX = "302a300506032b6570032100"


def normalize_public_key(text: str) -> str:
    """The form stored in ``entity.public_key``: no ``0x``, lower case, DER Ed25519 reduced to the raw key."""
    value = text[2:] if text[:2] in ("0x", "0X") else text
    value = value.lower()
    if len(value) == 88 and value.startswith(_ED25519_DER_PREFIX):
        value = value[len(_ED25519_DER_PREFIX) :]
    return value
