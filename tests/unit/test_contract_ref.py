"""The ``{contractIdOrAddress}`` grammar (``upstream-contracts.md`` §1.1): which texts are ids, long-zero
addresses, create2 addresses, or ``400 Invalid parameter: contractid``."""

from __future__ import annotations

import pytest

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.resources.contracts.contract_ref import ContractAddress, parse_contract
from ledgermirror.ledger.entity_id import EntityId

CREATE2 = "71EEfd0A9Cd0bD31B8cb3BEc4C4cc3d4E6e1e2A4"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5001", EntityId(0, 0, 5001)),
        ("0.5001", EntityId(0, 0, 5001)),
        ("0.0.5001", EntityId(0, 0, 5001)),
        ("1.2.5001", EntityId(1, 2, 5001)),
        ("0x0000000000000000000000000000000000001389", EntityId(0, 0, 5001)),
        ("0000000000000000000000000000000000001389", EntityId(0, 0, 5001)),
        ("0.0.0000000000000000000000000000000000001389", EntityId(0, 0, 5001)),
        ("0x" + CREATE2, ContractAddress(bytes.fromhex(CREATE2), CREATE2)),
        ("1.2." + CREATE2, ContractAddress(bytes.fromhex(CREATE2), CREATE2)),  # the prefix is not looked up
    ],
)
def test_valid_forms(text: str, expected: EntityId | ContractAddress) -> None:
    assert parse_contract(text, shard=0, realm=0) == expected


@pytest.mark.parametrize(
    "text",
    ["abc", "1.2.3.4", "", "0x", "0.0.0x" + CREATE2, CREATE2[:-1], CREATE2 + "0", "0.0.-1", "0.0.1\x00", "٣"],
)
def test_invalid_forms(text: str) -> None:
    with pytest.raises(BadRequest, match=r"^Invalid parameter: contractid$"):
        parse_contract(text, shard=0, realm=0)
