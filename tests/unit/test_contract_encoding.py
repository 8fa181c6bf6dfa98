"""The contract routes' output encodings (``upstream-contracts.md`` §1.2), checked value by value."""

from __future__ import annotations

import pytest

from ledgermirror.api.resources.contracts import contract_encoding as enc
from ledgermirror.ledger.entity_id import encode_entity_id


@pytest.mark.parametrize(
    ("value", "pad", "expected"),
    [
        (None, 0, "0x"),
        (b"", 0, "0x"),
        (b"", 64, "0x"),  # empty is never padded
        (b"\x0a", 0, "0x0a"),
        (b"\x00\xab", 0, "0x00ab"),
        (b"\x01", 8, "0x00000001"),
        (b"\xff" * 5, 4, "0xffffffffff"),  # longer than the pad: kept whole
    ],
)
def test_hex_bytes(value: bytes | None, pad: int, expected: str) -> None:
    assert enc.hex_bytes(value, pad=pad) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "0x"), (b"", "0x"), (b"\x0a", "0xa"), (b"\x00", "0x0"), (b"\x01\x00", "0x100"), (b"\xab", "0xab")],
)
def test_quantity_hex_drops_one_leading_zero_nibble(value: bytes | None, expected: str) -> None:
    assert enc.quantity_hex(value) == expected


def test_quantity_of_int() -> None:
    assert [enc.quantity_of_int(0), enc.quantity_of_int(10), enc.quantity_of_int(4096)] == ["0x0", "0xa", "0x1000"]
    with pytest.raises(ValueError, match="not negative"):
        enc.quantity_of_int(-1)


def test_to_uint256() -> None:
    assert enc.to_uint256(None) is None
    assert enc.to_uint256(b"") == "0x" + "0" * 64
    assert enc.to_uint256(b"\x01") == "0x" + "0" * 63 + "1"
    assert enc.to_uint256(bytes(range(32))) == "0x" + bytes(range(32)).hex()


def test_long_zero_of_encodes_the_num_only() -> None:
    assert enc.long_zero_of(None) is None
    assert enc.long_zero_of(0) is None
    assert enc.long_zero_of(encode_entity_id(0, 0, 1001)) == "0x00000000000000000000000000000000000003e9"
    assert enc.long_zero_of(encode_entity_id(1, 2, 1001)) == "0x00000000000000000000000000000000000003e9"
    assert enc.long_zero_of(encode_entity_id(1, 2, 0)) is None


def test_entity_address_prefers_the_evm_address() -> None:
    assert enc.entity_address(bytes.fromhex("ab" * 20), 1001) == "0x" + "ab" * 20
    assert enc.entity_address(None, 1001) == enc.entity_address(b"", 1001) == "0x" + "0" * 37 + "3e9"
    assert enc.entity_address(None, None) is None


def test_address_hex_pads_to_20_bytes() -> None:
    assert enc.address_hex(None) is None
    assert enc.address_hex(b"") is None
    assert enc.address_hex(b"\x13\x89") == "0x" + "0" * 36 + "1389"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "0x"), ("", "0x"), (b"", "0x"), ("abc", "0xabc"), ("0xabc", "0xabc"), (b"6080", "0x6080")],
)
def test_add_hex_prefix(value: str | bytes | None, expected: str) -> None:
    assert enc.add_hex_prefix(value) == expected


def test_bloom_rules() -> None:
    assert enc.bloom_hex(None) == "0x"
    assert enc.bloom_hex(b"") == "0x" + "0" * 512
    assert enc.bloom_hex(b"\x01\x23") == "0x0123"


def test_log_data_and_topics() -> None:
    assert enc.log_data_hex(None) == enc.log_data_hex(b"") == "0x"
    assert enc.log_data_hex(b"\x01\x23") == "0x" + "0" * 60 + "0123"
    assert enc.log_data_hex(b"\x01" * 40) == "0x" + "01" * 40
    assert enc.log_topics(b"\x01", None, b"", None) == ["0x" + "0" * 63 + "1", "0x" + "0" * 64]
    assert enc.log_topics(None, None, None, None) == []
