"""GET /api/v1/tokens/{tokenId} against a real PostgreSQL: the token object, its custom fees now and as of a
timestamp, every path form and every bad input."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger

BASE = "/api/v1/tokens"
SETUP: dict[str, Any] = {
    "entities": [
        {"num": 1135, "type": "TOKEN", "memo": "fees", "auto_renew_period": 7776000, "auto_renew_account_id": 1001,
         "timestamp_range": "[1234567890000000005,)"},
        {"num": 1135, "type": "TOKEN", "memo": "before",
         "timestamp_range": "[1234567890000000001,1234567890000000005)"},
        {"num": 1136, "type": "TOKEN", "expiration_timestamp": "1234567899000000000"},
    ],
    "tokens": [
        {"token_id": "0.0.1135", "symbol": "FEES", "created_timestamp": "1234567890000000001",
         "type": "FUNGIBLE_COMMON", "decimals": 2, "metadata": [1, 2, 3],
         "custom_fees": [
             {"entity_id": "0.0.1135", "timestamp_range": "[1234567890000000001,1234567890000000010)",
              "fixed_fees": [{"amount": 5, "collector_account_id": "0.0.900"}]},
             {"entity_id": "0.0.1135", "timestamp_range": "[1234567890000000010,)",
              "fractional_fees": [{"collector_account_id": "0.0.901", "numerator": 1, "denominator": 10,
                                   "minimum_amount": 1, "maximum_amount": 5}]},
         ]},
        {"token_id": "0.0.1136", "symbol": "NFT", "created_timestamp": "1234567890000000003",
         "type": "NON_FUNGIBLE_UNIQUE",
         "custom_fees": [{"entity_id": "0.0.1136", "timestamp_range": "[1234567890000000003,)",
                          "royalty_fees": [{"collector_account_id": "0.0.902", "numerator": 1, "denominator": 4,
                                            "fallback_fee": {"amount": 7, "denominating_token_id": "0.0.1135"}},
                                           {"collector_account_id": "0.0.903", "numerator": 1, "denominator": 5,
                                            "fallback_fee": {"amount": 0}}]}]},
    ],
}  # fmt: skip


@pytest.fixture
def tokens(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_token_now(tokens: TestClient) -> None:
    response = tokens.get(f"{BASE}/0.0.1135")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=5"
    body = response.json()
    assert body["token_id"] == "0.0.1135" and body["memo"] == "fees"
    assert body["decimals"] == "2" and isinstance(body["total_supply"], str)
    assert body["auto_renew_account"] == "0.0.1001" and body["auto_renew_period"] == 7776000
    assert body["expiry_timestamp"] == 1234567890000000001 + 7776000 * 10**9
    assert body["metadata"] == "AQID"
    assert body["modified_timestamp"] == "1234567890.000000005"
    assert body["custom_fees"] == {
        "created_timestamp": "1234567890.000000010",
        "fixed_fees": [],
        "fractional_fees": [
            {"all_collectors_are_exempt": False, "amount": {"numerator": 1, "denominator": 10},
             "collector_account_id": "0.0.901", "denominating_token_id": "0.0.1135", "maximum": 5, "minimum": 1,
             "net_of_transfers": False}
        ],
    }  # fmt: skip


@pytest.mark.parametrize("form", ["1135", "0.1135", "0.0.1135", "0x000000000000000000000000000000000000046f",
                                  "000000000000000000000000000000000000046F",
                                  "0.0.000000000000000000000000000000000000046F"])  # fmt: skip
def test_path_forms(tokens: TestClient, form: str) -> None:
    assert tokens.get(f"{BASE}/{form}").json()["token_id"] == "0.0.1135"


@pytest.mark.parametrize(
    ("query", "memo", "fees_created"),
    [
        ("timestamp=1234567890.000000004", "before", "1234567890.000000001"),
        ("timestamp=lte:1234567890.000000005", "fees", "1234567890.000000001"),
        ("timestamp=lt:1234567890.000000005", "before", "1234567890.000000001"),
        ("timestamp=eq:1234567890.000000010", "fees", "1234567890.000000010"),
        ("timestamp=1&timestamp=1234567890.000000010", "fees", "1234567890.000000010"),
    ],
)
def test_token_as_of(tokens: TestClient, query: str, memo: str, fees_created: str) -> None:
    body = tokens.get(f"{BASE}/1135?{query}").json()
    assert body["memo"] == memo
    assert body["custom_fees"]["created_timestamp"] == fees_created
    if fees_created.endswith("1"):
        assert body["custom_fees"]["fixed_fees"][0]["amount"] == 5


def test_royalty_fees(tokens: TestClient) -> None:
    body = tokens.get(f"{BASE}/1136").json()
    assert body["expiry_timestamp"] == 1234567899000000000
    assert "fractional_fees" not in body["custom_fees"]
    royalty = body["custom_fees"]["royalty_fees"]
    assert royalty[0]["fallback_fee"] == {"amount": 7, "denominating_token_id": "0.0.1135"}
    assert royalty[1]["fallback_fee"] is None
    assert royalty[1]["amount"] == {"denominator": 5, "numerator": 1}


def test_not_found(tokens: TestClient) -> None:
    for url in (f"{BASE}/1137", f"{BASE}/1135?timestamp=1", f"{BASE}/1135?timestamp=lt:1234567890.000000001"):
        response = tokens.get(url)
        assert response.status_code == 404, url
        assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{BASE}/abc", ["Invalid parameter: tokenid"]),
        (f"{BASE}/0.0.0x000000000000000000000000000000000000046F", ["Invalid parameter: tokenid"]),
        (f"{BASE}/06bd279138d5918402fc8ad500526cb2ee0eb985", ["Invalid parameter: tokenid"]),
        (f"{BASE}/1%00", ["Invalid parameter: tokenid"]),
        (f"{BASE}/0.0.274877906944", ["Invalid parameter: tokenid"]),
        (f"{BASE}/1135?timestamp=%00", ["Invalid parameter: timestamp"]),
        (
            f"{BASE}/1135?timestamp=-1&timestamp=gt:1&timestamp=ne:1&balance=5",
            ["Invalid parameter: timestamp"] * 3 + ["Unknown query parameter: balance"],
        ),
    ],
)
def test_bad_input(tokens: TestClient, url: str, expected: list[str]) -> None:
    response = tokens.get(url)
    assert response.status_code == 400
    assert messages(response) == expected


def test_answers_match_the_reference_schema(tokens: TestClient) -> None:
    for url in (f"{BASE}/1135", f"{BASE}/1136"):
        assert reference_openapi.schema_errors("/api/v1/tokens/{tokenId}", tokens.get(url).json()) == []
