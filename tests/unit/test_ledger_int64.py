"""ledger/int64.py, ledger/entity_id.py's encoding functions, and the doctests of the ledger modules."""

from __future__ import annotations

import doctest
import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledgermirror.ledger.entity_id import (
    MAX_NUM,
    MAX_REALM,
    MAX_SHARD,
    EntityId,
    decode_entity_id,
    encode_entity_id,
)
from ledgermirror.ledger.int64 import INT64_MAX, INT64_MIN, to_signed64, to_unsigned64


def test_limits() -> None:
    assert (INT64_MIN, INT64_MAX) == (-9223372036854775808, 9223372036854775807)


@pytest.mark.parametrize(
    ("value", "signed", "unsigned"),
    [
        (0, 0, 0),
        (INT64_MAX, INT64_MAX, INT64_MAX),
        (INT64_MAX + 1, INT64_MIN, INT64_MAX + 1),
        (-1, -1, (1 << 64) - 1),
        ((1 << 64) + 5, 5, 5),
        (INT64_MIN, INT64_MIN, 1 << 63),
    ],
)
def test_to_signed_and_unsigned(value: int, signed: int, unsigned: int) -> None:
    assert to_signed64(value) == signed
    assert to_unsigned64(value) == unsigned


@given(st.integers(0, MAX_SHARD), st.integers(0, MAX_REALM), st.integers(0, MAX_NUM))
def test_encode_and_decode_round_trip(shard: int, realm: int, num: int) -> None:
    encoded = encode_entity_id(shard, realm, num)
    assert INT64_MIN <= encoded <= INT64_MAX
    assert encoded == EntityId(shard, realm, num).encoded
    assert decode_entity_id(encoded) == decode_entity_id(to_unsigned64(encoded)) == (shard, realm, num)


def test_encode_examples() -> None:
    assert encode_entity_id(0, 0, 1001) == 1001
    assert encode_entity_id(0, 1, 5) == 274877906949
    assert encode_entity_id(MAX_SHARD, MAX_REALM, MAX_NUM) == -1
    assert encode_entity_id(512, 0, 0) == INT64_MIN


@pytest.mark.parametrize(
    "module",
    ["aliases", "entity_id", "int64", "keys", "timestamps", "transaction_codes", "system_files", "custom_fees"],
)
def test_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"ledgermirror.ledger.{module}"))
    assert result.failed == 0
