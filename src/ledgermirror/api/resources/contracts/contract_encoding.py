"""The output encodings of the contract routes (``upstream-contracts.md`` §1.2 and the bloom, log and state rules
of §4.1, §5.3 and §7.3), as small pure functions over what the database returns (``bytes`` or ``None``).

Every hex string is lower case with a ``0x`` prefix. The reference distinguishes:

* *non-quantity* hex (:func:`hex_bytes`): ``"0x"`` for NULL or empty, else every byte;
* *quantity* hex (:func:`quantity_hex`): the same, one leading zero nibble dropped (``0x0a`` -> ``0xa``);
* 32-byte words (:func:`to_uint256`): slots and storage values, left-padded to 64 hex digits;
* EVM addresses of ids (:func:`long_zero_of`): the num only, left-padded to 40 hex digits.
"""

from __future__ import annotations

from ledgermirror.ledger.entity_id import MAX_NUM

EMPTY_HEX = "0x"
BLOOM_BYTES = 256
"""An EVM logs bloom is 2048 bits."""
_WORD_DIGITS = 64
_ADDRESS_DIGITS = 40


def hex_bytes(value: bytes | None, *, pad: int = 0) -> str:
    """``0x`` + lower-case hex, left-padded with zeros to ``pad`` digits; ``"0x"`` for NULL or empty bytes
    (never padded: the reference pads only non-empty values)."""
    if not value:
        return EMPTY_HEX
    return "0x" + bytes(value).hex().rjust(pad, "0")


def quantity_hex(value: bytes | None) -> str:
    """An Ethereum quantity: :func:`hex_bytes` with one leading ``0`` nibble removed when the text is longer
    than three characters (``0x0a`` -> ``0xa``, ``0x00`` -> ``0x0``, ``0x0100`` -> ``0x100``)."""
    text = hex_bytes(value)
    if len(text) > 3 and text[2] == "0":
        return "0x" + text[3:]
    return text


def quantity_of_int(value: int) -> str:
    """A non-negative integer as an Ethereum quantity (``0`` -> ``0x0``, ``10`` -> ``0xa``)."""
    if value < 0:
        raise ValueError(f"a quantity is not negative: {value}")
    return hex(value)


def to_uint256(value: bytes | None) -> str | None:
    """A 32-byte word: ``None`` for NULL, 64 zeros for empty bytes, else the hex left-padded to 64 digits."""
    if value is None:
        return None
    return "0x" + bytes(value).hex().rjust(_WORD_DIGITS, "0")


def long_zero_of(encoded: int | None) -> str | None:
    """The long-zero EVM address of an encoded id (its num only; shard and realm are not encoded); ``None`` for
    NULL or a num of 0, as the reference renders no address then."""
    if encoded is None:
        return None
    num = (encoded & 0xFFFF_FFFF_FFFF_FFFF) & MAX_NUM
    if num == 0:
        return None
    return "0x" + format(num, f"0{_ADDRESS_DIGITS}x")


def entity_address(evm_address: bytes | None, encoded: int | None) -> str | None:
    """A contract's ``address``/``evm_address``: its own EVM address when it has one, else the long-zero
    address of its id."""
    if evm_address:
        return "0x" + bytes(evm_address).hex()
    return long_zero_of(encoded)


def address_hex(value: bytes | None) -> str | None:
    """A stored 20-byte address (e.g. ``recipient_address``, ``to_address``) left-padded to 40 digits; ``None``
    for NULL or empty."""
    if not value:
        return None
    return "0x" + bytes(value).hex().rjust(_ADDRESS_DIGITS, "0")


def add_hex_prefix(value: str | bytes | None) -> str:
    """``addHexPrefix``: ``"0x"`` for NULL or empty; text (bytes read as UTF-8) gets ``0x`` unless it has it."""
    if not value:
        return EMPTY_HEX
    text = bytes(value).decode("utf-8", errors="replace") if isinstance(value, (bytes, bytearray)) else value
    return text if text.startswith("0x") else "0x" + text


def bloom_hex(value: bytes | None) -> str:
    """A result's ``bloom``: ``"0x"`` for NULL, an all-zero 256-byte bloom for empty bytes, else the hex."""
    if value is None:
        return EMPTY_HEX
    if not value:
        return "0x" + "00" * BLOOM_BYTES
    return "0x" + bytes(value).hex()


def log_data_hex(value: bytes | None) -> str:
    """A log's ``data``: ``"0x"`` for NULL or empty, else the hex left-padded to at least 64 digits."""
    return hex_bytes(value, pad=_WORD_DIGITS)


def log_topics(*topics: bytes | None) -> list[str]:
    """A log's ``topics``: the non-NULL topics in order, each left-padded to 64 digits (an empty topic is a
    zero word)."""
    return ["0x" + bytes(topic).hex().rjust(_WORD_DIGITS, "0") for topic in topics if topic is not None]
