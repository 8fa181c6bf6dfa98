"""Entity id parsing as the reference spec loader does it.

Two parsers exist, and which one a column uses is part of the loader contract:

* :func:`spec_id` (the reference's "encoded id from spec value"): a bare number or numeric string is the *num*
  within the configured shard/realm; ``"realm.num"`` and ``"shard.realm.num"`` parse as usual; null stays null.
* :func:`encoded_id` (the reference's ``EntityId.parse``): a bare number is an *already encoded* id.

At shard 0 / realm 0 both give the same value for a plain number. An opaque (non long-zero) EVM address
parses to an id without a num, whose encoded value is null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ledgermirror.conformance.values import SetupValueError, js_str
from ledgermirror.ledger.entity_id import MAX_NUM as _MAX_NUM
from ledgermirror.ledger.entity_id import MAX_REALM as _MAX_REALM
from ledgermirror.ledger.entity_id import MAX_SHARD as _MAX_SHARD
from ledgermirror.ledger.entity_id import decode_entity_id, encode_entity_id, long_zero_num
from ledgermirror.ledger.int64 import INT64_MAX as _INT64_MAX
from ledgermirror.ledger.int64 import INT64_MIN as _INT64_MIN

_ENTITY_ID = re.compile(r"^(\d{1,4}\.)?\d{1,5}\.\d{1,12}\Z", re.ASCII)
_ENCODED_ID = re.compile(r"^-?\d{1,19}\Z", re.ASCII)
_EVM_ADDRESS = re.compile(r"^(0x)?[A-Fa-f0-9]{40}\Z", re.ASCII)
_EVM_ADDRESS_SHARD_REALM = re.compile(r"^(\d{1,4}\.)?(\d{1,5}\.)?[A-Fa-f0-9]{40}\Z", re.ASCII)


@dataclass(frozen=True, slots=True)
class Context:
    """The configured ``hiero.mirror.common`` shard and realm (0/0 in the reference tests)."""

    shard: int = 0
    realm: int = 0

    def id_text(self, num: int) -> str:
        """``EntityId.parseString(num).toString()``, e.g. ``"0.0.300"``."""
        return f"{self.shard}.{self.realm}.{num}"


def _strip_hex(text: str) -> str:
    return text[2:] if text.startswith("0x") else text


def _is_evm_address(text: str) -> bool:
    return bool(_EVM_ADDRESS.match(text) or _EVM_ADDRESS_SHARD_REALM.match(text))


def _is_evm_alias(text: str) -> bool:
    """A valid EVM address that is not a long-zero (``0x000...num``) address."""
    if not _is_evm_address(text):
        return False
    return long_zero_num(_strip_hex(text).split(".")[-1]) is None


def _invalid(text: str) -> SetupValueError:
    return SetupValueError(f'Invalid entity ID "{text}"')


def _parse_dotted(text: str, ctx: Context) -> tuple[int, int, int | None]:
    parts = _strip_hex(text).split(".")
    last = parts[-1]
    shard = int(parts.pop(0)) if len(parts) == 3 else ctx.shard
    realm = int(parts.pop(0)) if len(parts) == 2 else ctx.realm
    if len(last) in (40, 42):
        if shard != ctx.shard or realm != ctx.realm:
            raise SetupValueError(f"Invalid shard or realm for EVM address {text}")
        return shard, realm, long_zero_num(_strip_hex(last))
    return shard, realm, int(last)


def _parse(text: str, ctx: Context) -> int | None:
    """``EntityId.parse`` of a non-null value already converted to a string; returns the encoded id."""
    if not (_ENTITY_ID.match(text) or _ENCODED_ID.match(text) or _is_evm_address(text)):
        raise _invalid(text)
    if "." in text or len(text) in (40, 42):
        shard, realm, num = _parse_dotted(text, ctx)
        if num is None:
            return None
    else:
        encoded = int(text)
        if not _INT64_MIN <= encoded <= _INT64_MAX:
            raise _invalid(text)
        shard, realm, num = decode_entity_id(encoded)
    if num > _MAX_NUM or realm > _MAX_REALM or shard > _MAX_SHARD:
        raise _invalid(text)
    return encode_entity_id(shard, realm, num)


def encoded_id(value: Any, ctx: Context, *, nullable: bool = False) -> int | None:
    """``EntityId.parse(value)``: a bare number is an encoded id; null is an error unless nullable."""
    if value is None:
        if nullable:
            return None
        raise SetupValueError("Null entity ID")
    return _parse(js_str(value), ctx)


def string_id(value: Any, ctx: Context) -> int | None:
    """``EntityId.parseString(String(value))``: a bare number is a num in the configured shard/realm.
    null is rendered as ``"null"`` first, so it is an error."""
    text = _strip_hex(js_str(value))
    pieces: list[str] = text.split(".")
    if not _is_evm_alias(text):
        defaults = [str(ctx.shard), str(ctx.realm)]
        pieces = defaults[: 3 - len(pieces)] + pieces  # JS slice semantics, negative ends included
    return _parse(".".join(pieces), ctx)


def spec_id(value: Any, ctx: Context) -> int | None:
    """The spec-value parse: null stays null, anything else is :func:`string_id`."""
    if value is None:
        return None
    return string_id(value, ctx)
