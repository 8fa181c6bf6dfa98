"""Value parsers shared by many parameters. Each takes the text after the operator and raises InvalidValue."""

from __future__ import annotations

import re
from collections.abc import Callable

from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.params import InvalidValue, ParamSpec, ParseContext
from ledgermirror.ledger.entity_id import (
    EntityId,
    EntityIdOutOfRange,
    EvmAddress,
    EvmForm,
    InvalidEntityId,
    parse_entity_ref,
)
from ledgermirror.ledger.int64 import INT64_MAX as _INT64_MAX
from ledgermirror.ledger.keys import normalize_public_key
from ledgermirror.ledger.timestamps import InvalidTimestamp, parse_timestamp

_LIMIT = re.compile(r"^\d{1,19}$", re.ASCII)
_PUBLIC_KEY = re.compile(r"^(0x)?([0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{88})$", re.ASCII)


def limit(text: str, ctx: ParseContext) -> int:
    """A positive integer; values above the maximum are capped, as the reference does."""
    if not _LIMIT.fullmatch(text):
        raise InvalidValue(text)
    value = int(text)
    if value <= 0 or value > _INT64_MAX:
        raise InvalidValue(text)
    return min(value, ctx.limit_max)


def order(text: str, ctx: ParseContext) -> Order:
    try:
        return Order(text.lower())
    except ValueError:
        raise InvalidValue(text) from None


def entity_id(evm: EvmForm = EvmForm.NONE) -> Callable[[str, ParseContext], EntityId | EvmAddress]:
    def parse(text: str, ctx: ParseContext) -> EntityId | EvmAddress:
        try:
            return parse_entity_ref(text, shard=ctx.shard, realm=ctx.realm, evm=evm)
        except EntityIdOutOfRange:
            raise InvalidValue(text, f'Invalid entity ID "{text}"') from None
        except InvalidEntityId:
            raise InvalidValue(text) from None

    return parse


def numeric_entity_id(evm: EvmForm = EvmForm.LONG_ZERO) -> Callable[[str, ParseContext], EntityId]:
    """An id that is never an opaque EVM address (long-zero addresses are fine)."""
    inner = entity_id(evm)

    def parse(text: str, ctx: ParseContext) -> EntityId:
        value = inner(text, ctx)
        if not isinstance(value, EntityId):
            raise InvalidValue(text)
        return value

    return parse


def true_false(text: str, ctx: ParseContext) -> bool:
    """``true`` or ``false``, case-insensitive."""
    lowered = text.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise InvalidValue(text)


def switch(name: str, description: str) -> ParamSpec[bool]:
    """A ``true``/``false`` parameter that takes no operator, its last value winning (the EVM routes' ``stack``,
    ``memory``, ``storage``, ``diff``, ``code``)."""
    return ParamSpec[bool](
        name, true_false, description, ops=frozenset(), repeatable=False, schema={"type": "boolean"}
    )


def timestamp(text: str, ctx: ParseContext) -> int:
    try:
        return parse_timestamp(text)
    except InvalidTimestamp:
        raise InvalidValue(text) from None


def public_key(text: str, ctx: ParseContext) -> str:
    if not _PUBLIC_KEY.fullmatch(text):
        raise InvalidValue(text)
    return normalize_public_key(text)


def choice(*allowed: str) -> Callable[[str, ParseContext], str]:
    """Case-insensitive choice; the value comes back upper-cased."""
    upper = frozenset(value.upper() for value in allowed)

    def parse(text: str, ctx: ParseContext) -> str:
        value = text.upper()
        if value not in upper:
            raise InvalidValue(text)
        return value

    return parse


def utf8_length(low: int, high: int) -> Callable[[str, ParseContext], str]:
    def parse(text: str, ctx: ParseContext) -> str:
        if not low <= len(text.encode()) <= high:
            raise InvalidValue(text)
        return text

    return parse


def integer_between(low: int, high: int = _INT64_MAX) -> Callable[[str, ParseContext], int]:
    """A decimal integer written as 1 to 19 digits (no sign), from ``low`` to ``high`` (serial numbers)."""

    def parse(text: str, ctx: ParseContext) -> int:
        if not _LIMIT.fullmatch(text):
            raise InvalidValue(text)
        value = int(text)
        if not low <= value <= high:
            raise InvalidValue(text)
        return value

    return parse


_STORAGE_SLOT = re.compile(r"(?:0x)?[0-9a-fA-F]{1,64}", re.ASCII)


def storage_slot(text: str, ctx: ParseContext) -> int:
    """A storage slot (a contract's or a hook's) as a number: 1 to 64 hex digits with an optional ``0x``."""
    if not _STORAGE_SLOT.fullmatch(text):
        raise InvalidValue(text)
    return int(text.removeprefix("0x"), 16)
