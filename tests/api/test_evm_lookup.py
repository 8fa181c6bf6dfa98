"""The one EVM-address lookup (``api/resources/evm_lookup.py``): a path segment needs exactly one live entity, a
query filter takes the lowest live id; "live" is ``deleted is not true`` (a NULL ``deleted`` is live)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger

ADDRESS = "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"
ALONE = "71eaa748d5252be68c1185588beca495459fdba4"

SETUP: dict[str, Any] = {
    "entities": [
        {"num": 1001, "type": "TOKEN"},
        {"num": 1002, "type": "TOKEN"},
        {"num": 3001, "type": "ACCOUNT", "evm_address": ADDRESS, "deleted": True},
        {"num": 3002, "type": "ACCOUNT", "evm_address": ADDRESS, "deleted": None},
        {"num": 3003, "type": "ACCOUNT", "evm_address": ADDRESS, "deleted": False},
        {"num": 3004, "type": "ACCOUNT", "evm_address": ALONE},
    ],
    "tokens": [
        {
            "token_id": "0.0.1001",
            "name": "One",
            "symbol": "ONE",
            "type": "FUNGIBLE_COMMON",
            "created_timestamp": 1,
        },
        {
            "token_id": "0.0.1002",
            "name": "Two",
            "symbol": "TWO",
            "type": "FUNGIBLE_COMMON",
            "created_timestamp": 2,
        },
    ],
    "tokenaccounts": [
        {"account_id": "0.0.3001", "token_id": "0.0.1001", "associated": True},
        {"account_id": "0.0.3002", "token_id": "0.0.1002", "associated": True},
        {"account_id": "0.0.3003", "token_id": "0.0.1001", "associated": True},
    ],
}


@pytest.fixture
def shared(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def test_filter_takes_the_lowest_live_id(shared: TestClient) -> None:
    tokens = shared.get(f"/api/v1/tokens?account.id=0x{ADDRESS}").json()["tokens"]
    assert [token["token_id"] for token in tokens] == ["0.0.1002"]  # 0.0.3002's; 0.0.3001 is deleted
    accounts = shared.get(f"/api/v1/accounts?account.id={ADDRESS}&balance=false").json()["accounts"]
    assert [account["account"] for account in accounts] == ["0.0.3002"]


def test_path_needs_exactly_one_live_entity(shared: TestClient) -> None:
    assert shared.get(f"/api/v1/accounts/{ADDRESS}").status_code == 500
    found = shared.get(f"/api/v1/accounts/0x{ALONE}/rewards")
    assert found.status_code == 200, found.text
    missing = shared.get("/api/v1/accounts/0x" + "ab" * 20 + "/rewards")
    assert (missing.status_code, missing.json()["_status"]["messages"][0]["message"]) == (404, "Not found")


def test_unknown_address_in_a_filter_matches_nothing(shared: TestClient) -> None:
    unknown = "ab" * 20
    assert shared.get(f"/api/v1/tokens?account.id={unknown}").json() == {"tokens": [], "links": {"next": None}}
    assert shared.get(f"/api/v1/accounts?account.id=gt:{unknown}").json() == {
        "accounts": [],
        "links": {"next": None},
    }
