"""Entity ids: ``shard.realm.num`` values and their encoded 64-bit form.

The database stores every id as one signed 64-bit integer laid out as
``shard`` (10 bits) | ``realm`` (16 bits) | ``num`` (38 bits).

>>> EntityId.parse("0.0.1001", shard=0, realm=0).encoded
1001
>>> str(EntityId.decode(274877906949))
'0.1.5'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ledgermirror.ledger.int64 import to_signed64, to_unsigned64

MAX_SHARD = 1023
MAX_REALM = 65535
MAX_NUM = (1 << 38) - 1

_SHARD_REALM_NUM = re.compile(r"^(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(\d{1,19})$", re.ASCII)
_EVM = re.compile(r"^(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(0x)?([0-9a-fA-F]{40})$", re.ASCII)
_LONG_ZERO_PREFIX = "0" * 24
_NUM_BITS = 38
_REALM_BITS = 16


def encode_entity_id(shard: int, realm: int, num: int) -> int:
    """The signed 64-bit encoded id of ``shard.realm.num`` (no range checks: callers check, as
    :class:`EntityId` does).

    >>> encode_entity_id(0, 0, 1001), encode_entity_id(1, 2, 3)
    (1001, 18014948265295875)
    """
    return to_signed64((shard << (_NUM_BITS + _REALM_BITS)) | (realm << _NUM_BITS) | num)


def decode_entity_id(encoded: int) -> tuple[int, int, int]:
    """``(shard, realm, num)`` of an encoded id (signed or unsigned)."""
    unsigned = to_unsigned64(encoded)
    return (
        (unsigned >> (_NUM_BITS + _REALM_BITS)) & MAX_SHARD,
        (unsigned >> _NUM_BITS) & MAX_REALM,
        unsigned & MAX_NUM,
    )


class EvmForm(Enum):
    """Which EVM-address forms a parameter accepts."""

    NONE = "none"
    LONG_ZERO = "long_zero"  # only addresses whose first 12 bytes are zero
    ANY = "any"  # opaque addresses too (they need a lookup and may match nothing)


class InvalidEntityId(ValueError):
    """The text is not an entity id in any accepted form."""


class EntityIdOutOfRange(InvalidEntityId):
    """The text has the form of an id but a part is out of range (shard > 1023, realm > 65535, num >= 2^38)."""


@dataclass(frozen=True, slots=True)
class EntityId:
    shard: int
    realm: int
    num: int

    def __post_init__(self) -> None:
        if not (0 <= self.shard <= MAX_SHARD and 0 <= self.realm <= MAX_REALM and 0 <= self.num <= MAX_NUM):
            raise InvalidEntityId(f"{self.shard}.{self.realm}.{self.num} is out of range")

    @property
    def encoded(self) -> int:
        return encode_entity_id(self.shard, self.realm, self.num)

    @classmethod
    def decode(cls, encoded: int) -> EntityId:
        return cls(*decode_entity_id(encoded))

    @classmethod
    def parse(cls, text: str, *, shard: int, realm: int) -> EntityId:
        """Parse ``shard.realm.num``, ``realm.num`` or a bare ``num`` (no EVM forms)."""
        match = _SHARD_REALM_NUM.fullmatch(text)
        if match is None:
            raise InvalidEntityId(text)
        first, second, num_text = match.groups()
        if first is not None and second is None:  # "realm.num"
            first, second = None, first
        if (first is not None or second is not None) and len(num_text) > 12:
            raise InvalidEntityId(text)
        try:
            return cls(
                shard if first is None else int(first),
                realm if second is None else int(second),
                int(num_text),
            )
        except InvalidEntityId:
            raise EntityIdOutOfRange(text) from None

    def __str__(self) -> str:
        return f"{self.shard}.{self.realm}.{self.num}"


@dataclass(frozen=True, slots=True)
class EvmAddress:
    """An opaque 20-byte EVM address that must be looked up to find its entity."""

    address: bytes


def long_zero_num(hex_address: str) -> int | None:
    """The num a long-zero EVM address names (40 hex digits: twelve zero bytes, then a num that fits in 38 bits);
    None for an opaque address, which only a lookup can resolve.

    >>> long_zero_num("00000000000000000000000000000000000003e9")
    1001
    >>> long_zero_num("06bd279138d5918402fc8ad500526cb2ee0eb985") is None
    True
    """
    if not hex_address.startswith(_LONG_ZERO_PREFIX):
        return None
    num = int(hex_address[24:40], 16)
    return num if num <= MAX_NUM else None


def long_zero_address(num: int) -> str:
    """``0x`` and the 20-byte long-zero address of ``num`` (the num only: the reference encodes no shard or realm).

    >>> long_zero_address(1001)
    '0x00000000000000000000000000000000000003e9'
    """
    return "0x" + format(num, "040x")


def parse_entity_ref(text: str, *, shard: int, realm: int, evm: EvmForm) -> EntityId | EvmAddress:
    """Parse an id in any form the parameter allows; long-zero EVM addresses become ids."""
    evm_match = _EVM.fullmatch(text) if evm is not EvmForm.NONE else None
    if evm_match is None:
        return EntityId.parse(text, shard=shard, realm=realm)
    first, second, has_0x, hex_text = evm_match.groups()
    if first is not None and second is None:  # "realm.<address>"
        first, second = str(shard), first
    if first is not None and (has_0x or int(first) != shard or int(second) != realm):
        raise InvalidEntityId(text)
    num = long_zero_num(hex_text)
    if num is not None:
        return EntityId(shard, realm, num)
    if evm is EvmForm.LONG_ZERO:
        raise InvalidEntityId(text)
    return EvmAddress(bytes.fromhex(hex_text))


def format_encoded(encoded: int | None) -> str | None:
    """Render an encoded id as ``shard.realm.num``; ``None`` for null or num 0, as the reference does."""
    if encoded is None:
        return None
    unsigned = encoded & 0xFFFF_FFFF_FFFF_FFFF  # decode_entity_id inlined: this runs for every id rendered
    num = unsigned & MAX_NUM
    if num == 0:
        return None
    return f"{(unsigned >> 54) & MAX_SHARD}.{(unsigned >> 38) & MAX_REALM}.{num}"


def format_id(encoded: int) -> str:
    """Render an encoded id as ``shard.realm.num``, num 0 included (``0.0.0``), as ``str(EntityId.decode(x))``
    does, without building the ``EntityId``.

    >>> format_id(0), format_id(1001)
    ('0.0.0', '0.0.1001')
    """
    unsigned = encoded & 0xFFFF_FFFF_FFFF_FFFF
    return f"{(unsigned >> 54) & MAX_SHARD}.{(unsigned >> 38) & MAX_REALM}.{unsigned & MAX_NUM}"
