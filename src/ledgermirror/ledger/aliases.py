"""Account aliases and EVM addresses in their text forms.

An alias (``entity.alias``) is shown and accepted as RFC 4648 base32 in upper case without padding; an EVM
address (``entity.evm_address``, or a 20-byte alias) as ``0x`` and 40 lower-case hex digits.

>>> format_alias(bytes.fromhex("1220"))
'CIQA'
>>> decode_alias("CIQA").hex()
'1220'
>>> format_evm_address(bytes(19) + bytes([1]))
'0x0000000000000000000000000000000000000001'
"""

from __future__ import annotations

import base64
import binascii


class InvalidAlias(ValueError):
    """The text is not base32."""


def format_alias(raw: bytes) -> str:
    return base64.b32encode(raw).decode().rstrip("=")


def decode_alias(text: str) -> bytes:
    """Upper-case base32 with or without padding -> the alias bytes; :class:`InvalidAlias` otherwise."""
    try:
        return base64.b32decode(text + "=" * (-len(text) % 8))
    except binascii.Error:
        raise InvalidAlias(text) from None


def format_evm_address(raw: bytes) -> str:
    return "0x" + bytes(raw).hex()
