"""The ``ethereum_data`` of an EthereumTransaction: RLP decoding of legacy, EIP-2930, EIP-1559 and EIP-7702
transactions into the columns of ``ethereum_transaction`` (reference §3.6).

Quantities the reference keeps as bytes (chain id, gas prices, value) stay big-endian bytes without leading
zeros; nonce and gas limit become integers. A payload that does not decode raises :class:`EthereumDataError`
(the reference logs a recoverable error and writes no row).
"""

from __future__ import annotations

from typing import Any

RlpValue = bytes | list["RlpValue"]

LEGACY = 0
EIP_2930 = 1
EIP_1559 = 2
EIP_7702 = 4
_LEGACY_CHAIN_V = 35
"""EIP-155: v = chain id * 2 + 35 + recovery id."""
_PLAIN_V = 27


class EthereumDataError(ValueError):
    """``ethereum_data`` that is no RLP transaction of a known type."""


def _length(data: bytes, start: int, size: int) -> int:
    if start + size > len(data):
        raise EthereumDataError("RLP length past the end")
    return int.from_bytes(data[start : start + size], "big")


def _item(data: bytes, position: int) -> tuple[RlpValue, int]:
    """The item at ``position`` and the position after it."""
    if position >= len(data):
        raise EthereumDataError("RLP item past the end")
    head = data[position]
    if head < 0x80:
        return data[position : position + 1], position + 1
    if head < 0xB8:
        start, size = position + 1, head - 0x80
    elif head < 0xC0:
        start = position + 1 + head - 0xB7
        size = _length(data, position + 1, head - 0xB7)
    elif head < 0xF8:
        start, size = position + 1, head - 0xC0
    else:
        start = position + 1 + head - 0xF7
        size = _length(data, position + 1, head - 0xF7)
    end = start + size
    if end > len(data):
        raise EthereumDataError("RLP item past the end")
    if head < 0xC0:
        return data[start:end], end
    items: list[RlpValue] = []
    cursor = start
    while cursor < end:
        value, cursor = _item(data, cursor)
        items.append(value)
    if cursor != end:
        raise EthereumDataError("RLP list length mismatch")
    return items, end


def decode_rlp(data: bytes) -> RlpValue:
    value, end = _item(data, 0)
    if end != len(data):
        raise EthereumDataError("bytes after the RLP item")
    return value


def _bytes(value: RlpValue) -> bytes:
    if not isinstance(value, bytes):
        raise EthereumDataError("a list where bytes are expected")
    return value


def _int(value: RlpValue) -> int:
    return int.from_bytes(_bytes(value), "big")


def _encode(value: RlpValue) -> bytes:
    """RLP encoding (used to keep the access list as the reference does: its raw RLP)."""
    if isinstance(value, bytes):
        if len(value) == 1 and value[0] < 0x80:
            return value
        return _prefix(len(value), 0x80) + value
    payload = b"".join(_encode(element) for element in value)
    return _prefix(len(payload), 0xC0) + payload


def _prefix(length: int, offset: int) -> bytes:
    if length < 56:
        return bytes((offset + length,))
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes((offset + 55 + len(size),)) + size


def _authorizations(value: RlpValue) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise EthereumDataError("authorization list is no list")
    found = []
    for entry in value:
        if not isinstance(entry, list) or len(entry) != 6:
            raise EthereumDataError("bad authorization tuple")
        chain, address, nonce, parity, r, s = entry
        found.append(
            {
                "chain_id": "0x" + _bytes(chain).hex(),
                "address": "0x" + _bytes(address).hex(),
                "nonce": _int(nonce),
                "y_parity": _int(parity),
                "r": "0x" + _bytes(r).hex(),
                "s": "0x" + _bytes(s).hex(),
            }
        )
    return found


def decode_ethereum_data(data: bytes) -> dict[str, Any]:
    """The decoded columns of ``ethereum_transaction`` (without the ids, hash and timestamp)."""
    if not data:
        raise EthereumDataError("empty ethereum_data")
    if data[0] >= 0xC0:
        return _legacy(decode_rlp(data))
    kind, fields = data[0], decode_rlp(data[1:])
    sizes = {EIP_2930: 11, EIP_1559: 12, EIP_7702: 13}
    if kind not in sizes:
        raise EthereumDataError(f"unknown transaction type {kind}")
    if not isinstance(fields, list) or len(fields) != sizes[kind]:
        raise EthereumDataError(f"type {kind} transaction with a wrong number of fields")
    row: dict[str, Any] = {"type": kind, "chain_id": _bytes(fields[0]), "nonce": _int(fields[1])}
    if kind == EIP_2930:
        row["gas_price"] = _bytes(fields[2])
        rest = fields[3:]
    else:
        row["max_priority_fee_per_gas"] = _bytes(fields[2])
        row["max_fee_per_gas"] = _bytes(fields[3])
        rest = fields[4:]
    gas_limit, to, value, call_data, access_list = rest[:5]
    if kind == EIP_7702:
        row["authorization_list"] = _authorizations(rest[5])
    parity, r, s = rest[-3:]
    access = access_list if isinstance(access_list, list) else []
    row.update(
        gas_limit=_int(gas_limit),
        to_address=_bytes(to) or None,
        value=_bytes(value),
        call_data=_bytes(call_data),
        access_list=_encode(access) if access else None,
        recovery_id=_int(parity),
        signature_r=_bytes(r),
        signature_s=_bytes(s),
    )
    return row


def _legacy(fields: RlpValue) -> dict[str, Any]:
    if not isinstance(fields, list) or len(fields) != 9:
        raise EthereumDataError("legacy transaction with a wrong number of fields")
    nonce, gas_price, gas_limit, to, value, call_data, v, r, s = fields
    v_value = _int(v)
    chain_id = b""
    recovery = v_value - _PLAIN_V
    if v_value >= _LEGACY_CHAIN_V:
        chain = (v_value - _LEGACY_CHAIN_V) // 2
        chain_id = chain.to_bytes((chain.bit_length() + 7) // 8, "big")
        recovery = (v_value - _LEGACY_CHAIN_V) % 2
    return {
        "type": LEGACY,
        "chain_id": chain_id or None,
        "nonce": _int(nonce),
        "gas_price": _bytes(gas_price),
        "gas_limit": _int(gas_limit),
        "to_address": _bytes(to) or None,
        "value": _bytes(value),
        "call_data": _bytes(call_data),
        "signature_v": _bytes(v),
        "recovery_id": recovery,
        "signature_r": _bytes(r),
        "signature_s": _bytes(s),
    }
