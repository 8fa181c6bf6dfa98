"""ledger/aliases.py (base32 aliases, EVM address text) and the long-zero EVM forms of ledger/entity_id.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledgermirror.ledger.aliases import InvalidAlias, decode_alias, format_alias, format_evm_address
from ledgermirror.ledger.entity_id import MAX_NUM, long_zero_address, long_zero_num


@given(st.binary(max_size=40))
def test_alias_round_trip(raw: bytes) -> None:
    text = format_alias(raw)
    assert "=" not in text
    assert text == text.upper()
    assert decode_alias(text) == raw


@pytest.mark.parametrize("text", ["CIQ1", "ciqa", "CIQ", "C", "CIQ!"])
def test_invalid_aliases(text: str) -> None:
    with pytest.raises(InvalidAlias):
        decode_alias(text)


def test_evm_address_text() -> None:
    assert format_evm_address(bytes(range(20))) == "0x000102030405060708090a0b0c0d0e0f10111213"
    assert format_evm_address(bytearray(b"\xab" * 20)) == "0x" + "ab" * 20


@pytest.mark.parametrize(
    ("address", "num"),
    [
        ("0" * 40, 0),
        ("0" * 37 + "3e9", 1001),
        ("0" * 30 + "3fffffffff", MAX_NUM),
        ("0" * 30 + "4000000000", None),  # too big for 38 bits: opaque
        ("0" * 23 + "1" + "0" * 13 + "3e9", None),  # a non-zero byte in the first twelve: opaque
        ("0" * 37 + "3E9", 1001),
        ("06bd279138d5918402fc8ad500526cb2ee0eb985", None),
    ],
)
def test_long_zero_num(address: str, num: int | None) -> None:
    assert long_zero_num(address) == num


@given(st.integers(0, MAX_NUM))
def test_long_zero_round_trip(num: int) -> None:
    address = long_zero_address(num)
    assert address.startswith("0x") and len(address) == 42
    assert long_zero_num(address[2:]) == num
