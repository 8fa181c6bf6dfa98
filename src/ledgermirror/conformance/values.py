"""Value conversions of the reference spec loader, reproduced in Python.

The reference harness is JavaScript: it converts spec values with JS semantics (``String(x)``, truthiness,
``Buffer.from``) and sends them through node-postgres, which turns every parameter into text (or raw bytes
for a Buffer) that PostgreSQL then parses with the column type's input function. This module mirrors those
steps: the loaders build Python values, and :func:`pg_text` renders each one the way node-postgres would, so
the SQL side can cast ``$n::text::<column type>`` and get PostgreSQL's own input rules (bytea escape format,
int8range canonicalisation, array literals, ...).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_HEX = re.compile(r"^(0x)?[0-9A-Fa-f]+\Z", re.ASCII)
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_BASE64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_BASE64["-"] = 62
_BASE64["_"] = 63
_BASE32 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}
_BASE32_LOOSE = str.maketrans({"0": "O", "1": "L", "8": "B"})


class SetupValueError(ValueError):
    """A spec value the reference loader would reject (or fail on)."""


# JS semantics ---------------------------------------------------------------------------------------------


def js_float(value: float) -> str:
    """``String(number)`` for a JS double (close enough for the values spec files hold)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return text


def js_str(value: Any) -> str:
    """``String(value)`` / template-literal conversion."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if item is None else js_str(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_truthy(value: Any) -> bool:
    """JS truthiness: null, false, 0, NaN and "" are falsy; every array and object is truthy."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def js_positive(value: Any) -> bool:
    """``value > 0`` with JS coercion (strings are converted to numbers, null is 0)."""
    if value is None:
        return False
    if isinstance(value, (int, float)):
        return value > 0
    if isinstance(value, str):
        try:
            return float(value.strip() or "0") > 0
        except ValueError:
            return False
    return False


def to_bigint(value: Any, what: str) -> int:
    """``BigInt(value)``: integers, integral numbers and integer strings (decimal or 0x/0o/0b)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        prefixes = {"0x": 16, "0o": 8, "0b": 2}
        base = prefixes.get(text[:2].lower())
        digits = text[2:] if base else text
        if "_" not in digits:
            try:
                return int(digits, base or 10)
            except ValueError:
                pass
    raise SetupValueError(f"{what}: cannot convert {value!r} to an integer")


# Bytes ------------------------------------------------------------------------------------------------------


def node_hex(text: str) -> bytes:
    """``Buffer.from(text, 'hex')``: decodes pairs of hex digits and stops at the first invalid pair."""
    out = bytearray()
    for index in range(0, len(text) - 1, 2):
        pair = text[index : index + 2]
        if pair[0] not in _HEX_DIGITS or pair[1] not in _HEX_DIGITS:
            break
        out.append(int(pair, 16))
    return bytes(out)


def node_base64(text: str) -> bytes:
    """``Buffer.from(text, 'base64')``: URL-safe letters allowed, other characters skipped, stops at ``=``."""
    out = bytearray()
    buffer = 0
    bits = 0
    for char in text:
        if char == "=":
            break
        value = _BASE64.get(char)
        if value is None:
            continue
        buffer = ((buffer << 6) | value) & 0xFFFFFF
        bits += 6
        if bits >= 8:
            bits -= 8
            out.append((buffer >> bits) & 0xFF)
    return bytes(out)


def _js_byte(item: Any) -> int:
    """One element of ``Buffer.from(array)``: ``Number(item) & 255``, where NaN gives 0."""
    if isinstance(item, bool):
        return int(item)
    if isinstance(item, int):
        return item & 0xFF
    if isinstance(item, float):
        return 0 if math.isnan(item) or math.isinf(item) else int(item) & 0xFF
    if isinstance(item, str):
        try:
            return to_bigint(item, "byte") & 0xFF
        except SetupValueError:
            try:
                number = float(item)
            except ValueError:
                return 0
            return _js_byte(number)
    return 0


def buffer_from(value: Any) -> bytes:
    """``Buffer.from(value)``: an array of byte values, a UTF-8 string, or bytes."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, list):
        return bytes(_js_byte(item) for item in value)
    raise SetupValueError(f"cannot make bytes from {value!r}")


def _hex_string(text: str) -> bytes:
    digits = text.removeprefix("0x")
    if len(digits) % 2:
        digits = "0" + digits
    return bytes.fromhex(digits)


def value_to_buffer(value: Any) -> Any:
    """*valueToBuffer*: hex string (optional ``0x``), else base64; arrays are byte values, except an array
    holding a single hex string. null stays null and any other value passes through unchanged."""
    if isinstance(value, str):
        return _hex_string(value) if _HEX.match(value) else node_base64(value)
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], str) and _HEX.match(value[0]):
            return _hex_string(value[0])
        return buffer_from(value)
    return value


def hex_or_bytes(value: Any) -> Any:
    """Entity ``key`` / transaction ``batch_key``: a string is hex (no ``0x``), anything else non-null is
    ``Buffer.from(value)``."""
    if value is None:
        return None
    if isinstance(value, str):
        return node_hex(value)
    return buffer_from(value)


def base32_decode(value: Any) -> Any:
    """Alias: RFC 4648 base32, parsed loosely (case-insensitive, 0/1/8 read as O/L/B, padding optional).
    A falsy value is returned unchanged, as in the reference."""
    if not js_truthy(value):
        return value
    if not isinstance(value, str):
        raise SetupValueError(f"alias must be a string, not {value!r}")
    text = value.upper().translate(_BASE32_LOOSE).rstrip("=")
    out = bytearray()
    buffer = 0
    bits = 0
    for char in text:
        code = _BASE32.get(char)
        if code is None:
            raise SetupValueError(f"invalid base32 character {char!r} in alias {value!r}")
        buffer = ((buffer << 5) | code) & 0xFFFF
        bits += 5
        if bits >= 8:
            bits -= 8
            out.append((buffer >> bits) & 0xFF)
    if bits >= 5 or (buffer << (8 - bits)) & 0xFF:
        raise SetupValueError(f"unexpected end of base32 data in alias {value!r}")
    return bytes(out)


# node-postgres parameter text --------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """``JSON.stringify(value)``."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def pg_array_literal(items: list[Any]) -> str:
    """node-postgres' rendering of a JS array parameter: ``[1, 2, 3]`` -> ``{"1","2","3"}``."""
    parts: list[str] = []
    for item in items:
        if item is None:
            parts.append("NULL")
        elif isinstance(item, list):
            parts.append(pg_array_literal(item))
        elif isinstance(item, (bytes, bytearray)):
            parts.append("\\\\x" + bytes(item).hex())
        else:
            text = pg_text(item) or ""
            parts.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "{" + ",".join(parts) + "}"


def pg_text(value: Any) -> str | None:
    """A parameter as node-postgres sends it: null, a Buffer (here ``\\x`` hex, the same bytes for a bytea
    column), an array literal for arrays, JSON for objects, and ``String(value)`` for everything else."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return "\\x" + bytes(value).hex()
    if isinstance(value, list):
        return pg_array_literal(value)
    if isinstance(value, dict):
        return json_text(value)
    return js_str(value)


def is_history(timestamp_range: Any) -> bool:
    """The reference routes a row to ``<table>_history`` when its range does not end in ``,)``."""
    if not isinstance(timestamp_range, str):
        raise SetupValueError(f"timestamp_range must be a string, not {timestamp_range!r}")
    return not timestamp_range.endswith(",)")
