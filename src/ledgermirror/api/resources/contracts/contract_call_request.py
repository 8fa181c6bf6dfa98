"""The body of ``POST /api/v1/contracts/call`` read and checked as the reference's web3 does (upstream-web3.md
§1.2-§1.5, §1.7): every field violation reported at once, each with the reference's text, and its error envelope
(``message``, ``detail`` and ``data`` in every entry)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from ledgermirror.api.errors import ApiError
from ledgermirror.api.resources.contracts.contract_call_overrides import AccountOverride, parse_overrides
from ledgermirror.ledger.int64 import INT64_MAX

MAX_STRING = 131_072 * 2 + 1_024
"""The reference's JSON limits: documents and strings of at most 263,168 characters."""
MIN_GAS = 21_000
_TAGS = frozenset({"latest", "pending", "safe", "finalized"})
_DECIMAL = re.compile(r"\d{1,20}", re.ASCII)
_HASH = re.compile(r"0x(?:[0-9a-f]{64}|[0-9a-f]{96})", re.ASCII)
_HEX_NUMBER = re.compile(r"0x[0-9a-f]{1,16}", re.ASCII)
_ADDRESS = re.compile(r"(0x)?[0-9a-fA-F]{40}", re.ASCII)
_DATA = re.compile(r"(0x)?[0-9a-fA-F]{0,1048576}", re.ASCII)
_INIT_CODE = re.compile(r"(?i)(0x)?(60806040|60606040)[0-9a-f]*39[0-9a-f]*f3[0-9a-f]*")
_INT64_MIN = -(1 << 63)


class Web3Error(ApiError):
    """The web3 error envelope: each entry ``{"message", "detail", "data"}``."""

    def __init__(self, status: int, entries: list[tuple[str, str, str]]) -> None:
        super().__init__(*(message for message, _, _ in entries))
        self.entries = entries
        self.status = status  # type: ignore[misc]

    def body(self) -> bytes:
        messages = [{"message": message, "detail": detail, "data": data} for message, detail, data in self.entries]
        return orjson.dumps({"_status": {"messages": messages}})


def bad_request(*details: str) -> Web3Error:
    return Web3Error(400, [("Bad Request", detail, "") for detail in details])


def parse_error(text: str) -> Web3Error:
    return bad_request(f"JSON parse error: {text}")


@dataclass(frozen=True, slots=True)
class Block:
    """``latest`` (the current tables), or a block by number or hash (read as of its end)."""

    latest: bool = False
    earliest: bool = False
    number: int | None = None
    hash: str | None = None
    """Lower-case hex, no ``0x``."""

    LATEST: ClassVar[Block]


Block.LATEST = Block(latest=True)


@dataclass(frozen=True, slots=True)
class CallRequest:
    block: Block
    data: bytes
    estimate: bool
    sender: bytes | None
    to: bytes | None
    gas: int
    gas_price: int
    value: int
    overrides: dict[bytes, AccountOverride] = field(default_factory=dict)
    """``state_overrides`` by address (``contract_call_overrides.py``)."""


def parse_block(value: Any) -> Block:
    """The reference's ``BlockType`` grammar; a bad value is its JSON parse error."""
    if value is None or value == "":
        return Block.LATEST
    if not isinstance(value, str):
        raise parse_error(f"Invalid block value: {value}")
    text = value.lower()
    if text in _TAGS:
        return Block.LATEST
    if text == "earliest":
        return Block(earliest=True)
    if _DECIMAL.fullmatch(text):
        if int(text) > INT64_MAX:
            raise parse_error(f"Decimal value out of range for block: {value}")
        return Block(number=int(text))
    if _HASH.fullmatch(text):
        return Block(hash=text[2:])
    if _HEX_NUMBER.fullmatch(text):
        if int(text, 16) > INT64_MAX:
            raise parse_error(f"Hex value out of range for block: {value}")
        return Block(number=int(text, 16))
    raise parse_error(f"Invalid block value: {value}")


def _integer(body: dict[str, Any], name: str, default: int) -> int:
    value = body.get(name, default)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not _INT64_MIN <= value <= INT64_MAX:
        raise parse_error(f"Cannot deserialize value of type `long` from {orjson.dumps(value).decode()}")
    return value


def _string(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise parse_error(f"Cannot deserialize value of type `java.lang.String` for field {name}")
    return value


def _hex(text: str) -> bytes:
    digits = text[2:] if text.startswith("0x") else text
    if len(digits) % 2:
        raise bad_request(f"Odd number of characters in hexadecimal string: {text}")
    return bytes.fromhex(digits)


def _problems(  # noqa: PLR0917 (one argument per field)
    data: str | None, sender: str | None, to: str | None, gas: int, gas_price: int, value: int
) -> list[str]:
    """Every field rule the request breaks, in the reference's words."""
    problems: list[str] = []
    if data is not None and not _DATA.fullmatch(data):
        problems.append("data field invalid hexadecimal string")
    if sender is not None and not _ADDRESS.fullmatch(sender):
        problems.append("from field invalid hexadecimal string")
    if to not in (None, "") and not _ADDRESS.fullmatch(to):
        problems.append("to field invalid hexadecimal string")
    if gas < MIN_GAS:
        problems.append(f"gas field must be greater than or equal to {MIN_GAS}")
    if gas_price < 0:
        problems.append("gasPrice field must be greater than or equal to 0")
    if value < 0:
        problems.append("value field must be greater than or equal to 0")
    if value > 0 and sender is None:
        problems.append("from field must not be empty")
    if value > 0 and sender is not None and to in (None, "") and not _INIT_CODE.fullmatch(data or ""):
        problems.append("to field must not be empty")
    return problems


def parse_call(raw: bytes, max_gas: int) -> CallRequest:
    """The request, or one :class:`Web3Error` naming every violation."""
    if len(raw) > MAX_STRING:
        raise parse_error(f"Document length ({len(raw)}) exceeds the maximum allowed ({MAX_STRING})")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise parse_error(str(error)) from None
    if not isinstance(body, dict):
        raise parse_error("Cannot deserialize the request from a JSON value that is not an object")
    block = parse_block(body.get("block"))
    data_text = _string(body, "data")
    sender_text = _string(body, "from")
    to_text = _string(body, "to")
    estimate = body.get("estimate")
    if estimate is not None and not isinstance(estimate, bool):
        raise parse_error(f"Cannot deserialize value of type `boolean` from {orjson.dumps(estimate).decode()}")
    gas = _integer(body, "gas", max_gas)
    gas_price = _integer(body, "gasPrice", 0)
    value = _integer(body, "value", 0)
    problems = _problems(data_text, sender_text, to_text, gas, gas_price, value)
    overrides = parse_overrides(body.get("state_overrides"), problems)
    if problems:
        raise bad_request(*problems)
    if gas > max_gas:
        raise bad_request(f"gas field must be less than or equal to {max_gas}")
    return CallRequest(
        block=block,
        data=_hex(data_text or ""),
        estimate=bool(estimate),
        sender=None if sender_text is None else _hex(sender_text),
        to=None if to_text in (None, "") else _hex(to_text or ""),
        gas=gas,
        gas_price=gas_price,
        value=value,
        overrides=overrides,
    )
