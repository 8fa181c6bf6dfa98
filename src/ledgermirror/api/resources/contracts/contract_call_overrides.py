"""``state_overrides`` of ``POST /api/v1/contracts/call`` (HIP-1485; the reference's web3 ``StateOverride`` and
``StorageEntry`` request models, newer than the reference commit of ``../shared/reference``): per address, a
balance (tinybars), a nonce, runtime code and either ``state`` (the whole storage: every slot not listed reads 0)
or ``state_diff`` (the listed slots; the others read through to the mirror), at most 10 addresses.

The overrides are applied where the EVM's state comes from (:class:`OverriddenState`, wrapping the route's
:class:`~ledgermirror.api.resources.contracts.contract_call_state.MirrorState`), so every read the EVM makes of an
overridden account or slot answers the override, in the worker as in the checks before it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ledgermirror.evm.state import AccountState
from ledgermirror.ledger.int64 import INT64_MAX

MAX_OVERRIDES = 10
"""The reference's ``@Size(max = 10)`` on ``state_overrides``."""
_FIELD = "stateOverrides"
"""The request model's field, as the reference's validation messages name it."""
_ADDRESS = re.compile(r"(0x)?[0-9a-fA-F]{40}", re.ASCII)
_HEX = re.compile(r"(0x)?[0-9a-fA-F]*", re.ASCII)
_QUANTITY = re.compile(r"0x[0-9a-fA-F]{1,16}", re.ASCII)
_WORD_DIGITS = 64


@dataclass(frozen=True, slots=True)
class AccountOverride:
    balance: int | None = None
    nonce: int | None = None
    code: bytes | None = None
    state: dict[int, int] | None = None
    """The whole storage (slots not listed read 0)."""
    state_diff: dict[int, int] | None = None
    """Slots replaced; the others read through."""


def _hex_bytes(text: str) -> bytes:
    digits = text[2:] if text[:2] in {"0x", "0X"} else text
    return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits)


def _number(value: Any, where: str, problems: list[str]) -> int | None:
    """A non-negative long: a JSON integer (the reference since 0.167) or a ``0x`` quantity (before it)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        problems.append(f"{where} field must be a non-negative integer")
        return None
    if isinstance(value, str):
        if not _QUANTITY.fullmatch(value):
            problems.append(f"{where} field invalid hexadecimal string")
            return None
        value = int(value, 16)
    number = int(value)
    if not 0 <= number <= INT64_MAX:
        problems.append(f"{where} field must be between 0 and {INT64_MAX}")
        return None
    return number


def _slots(value: Any, where: str, problems: list[str]) -> dict[int, int] | None:
    """``[{"key": hex, "value": hex}, ...]`` as slot -> value (a key listed twice: the last one)."""
    if value is None:
        return None
    if not isinstance(value, list):
        problems.append(f"{where} field must be a list of key and value entries")
        return None
    slots: dict[int, int] = {}
    for index, entry in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{at} field must be an object with key and value")
            continue
        words: list[int] = []
        for name in ("key", "value"):
            text = entry.get(name)
            digits = text[2:] if isinstance(text, str) and text[:2] in {"0x", "0X"} else text
            if not isinstance(text, str) or not _HEX.fullmatch(text) or not 0 < len(str(digits)) <= _WORD_DIGITS:
                problems.append(f"{at}.{name} field invalid hexadecimal string")
                continue
            words.append(int(str(digits), 16))
        if len(words) == 2:  # key and value
            slots[words[0]] = words[1]
    return slots


def _override(entry: Any, where: str, problems: list[str]) -> tuple[bytes, AccountOverride] | None:
    if not isinstance(entry, dict):
        problems.append(f"{where} field must be an object")
        return None
    address = entry.get("address")
    if address is None:
        problems.append(f"{where}.address field must not be null")
    elif not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        problems.append(f"{where}.address field invalid hexadecimal string")
    code_text = entry.get("code")
    code = None
    if code_text is not None:
        if not isinstance(code_text, str) or not _HEX.fullmatch(code_text):
            problems.append(f"{where}.code field invalid hexadecimal string")
        else:
            code = _hex_bytes(code_text)
    state = _slots(entry.get("state"), f"{where}.state", problems)
    state_diff = _slots(entry.get("state_diff"), f"{where}.state_diff", problems)
    if state and state_diff:  # an empty list is no override (the reference's isEmpty)
        problems.append(f"{where}.validStorage field state and state_diff are mutually exclusive")
    balance = _number(entry.get("balance"), f"{where}.balance", problems)
    nonce = _number(entry.get("nonce"), f"{where}.nonce", problems)
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        return None
    override = AccountOverride(balance, nonce, code, state or None, state_diff or None)
    return bytes.fromhex(address[-40:]), override


def parse_overrides(value: Any, problems: list[str]) -> dict[bytes, AccountOverride]:
    """``state_overrides`` by 20-byte address (an address given twice: its last entry); each rule it breaks is
    added to ``problems``."""
    if value is None:
        return {}
    if not isinstance(value, list):
        problems.append(f"{_FIELD} field must be a list")
        return {}
    if len(value) > MAX_OVERRIDES:
        problems.append(f"{_FIELD} field size must be between 0 and {MAX_OVERRIDES}")
        return {}
    overrides: dict[bytes, AccountOverride] = {}
    for index, entry in enumerate(value):
        parsed = _override(entry, f"{_FIELD}[{index}]", problems)
        if parsed is not None:
            overrides[parsed[0]] = parsed[1]
    return overrides


class OverriddenState:
    """The route's state with the request's overrides on top: ``answer`` serves the worker's questions as the
    wrapped state does, an overridden account's fields and slots replaced."""

    def __init__(self, inner: Any, overrides: dict[bytes, AccountOverride]) -> None:
        self._inner = inner
        self._overrides = overrides

    async def account(self, address: bytes) -> AccountState | None:
        found: AccountState | None = await self._inner.account(address)
        override = self._overrides.get(address)
        if override is None:
            return found
        base = found if found is not None else AccountState(0, 0, b"")
        return AccountState(
            base.balance if override.balance is None else override.balance,
            base.nonce if override.nonce is None else override.nonce,
            base.code if override.code is None else override.code,
        )

    async def slot(self, address: bytes, key: int) -> int:
        override = self._overrides.get(address)
        if override is not None and override.state is not None:
            return override.state.get(key, 0)
        if override is not None and override.state_diff is not None and key in override.state_diff:
            return override.state_diff[key]
        value: int = await self._inner.slot(address, key)
        return value

    async def answer(self, question: tuple[Any, ...]) -> Any:
        what, *arguments = question
        handlers: dict[str, Callable[..., Awaitable[Any]]] = {"account": self.account, "slot": self.slot}
        handler = handlers.get(what)
        if handler is None:
            return await self._inner.answer(question)
        return await handler(*arguments)
