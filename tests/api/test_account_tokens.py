"""GET /api/v1/accounts/{idOrAliasOrEvmAddress}/tokens against a real PostgreSQL: the relationship object, the
token's statuses as fallback, token.id filters, next links followed to the end, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

BASE = "/api/v1/accounts/0.0.1001/tokens"
EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead57"
SETUP: dict[str, Any] = {
    "accounts": [{"num": 1001, "evm_address": EVM}, {"num": 1002}],
    "tokens": [
        {"token_id": f"0.0.{num}", "symbol": f"T{num}", "created_timestamp": str(num), "decimals": num % 7,
         "type": "FUNGIBLE_COMMON", "freeze_status": 1, "kyc_status": 2}
        for num in (2000, 2001, 2002, 2003)
    ],
    "tokenaccounts": [
        {"token_id": f"0.0.{num}", "account_id": "0.0.1001", "balance": num, "created_timestamp": str(num),
         "freeze_status": 2 if num == 2000 else None, "associated": num != 2003}
        for num in (2000, 2001, 2002, 2003, 2004)
    ],
}  # fmt: skip


@pytest.fixture
def relationships(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def tokens(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["token_id"] for item in response.json()["tokens"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape(relationships: TestClient) -> None:
    response = relationships.get(BASE)
    assert response.headers["cache-control"] == "public, max-age=1"
    items = response.json()["tokens"]
    assert items[0] == {
        "automatic_association": False, "balance": 2000, "created_timestamp": "0.000002000", "decimals": 5,
        "token_id": "0.0.2000", "freeze_status": "UNFROZEN", "kyc_status": "REVOKED",
    }  # fmt: skip
    assert items[1]["freeze_status"] == "FROZEN"
    assert items[-1]["token_id"] == "0.0.2004" and items[-1]["decimals"] is None
    assert items[-1]["freeze_status"] is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["0.0.2000", "0.0.2001", "0.0.2002", "0.0.2004"]),
        ("order=desc", ["0.0.2004", "0.0.2002", "0.0.2001", "0.0.2000"]),
        ("token.id=2001&token.id=0.0.2004", ["0.0.2001", "0.0.2004"]),
        ("token.id=gt:2000&token.id=lte:0x00000000000000000000000000000000000007d2", ["0.0.2001", "0.0.2002"]),
        ("token.id=2003", []),
    ],
)
def test_filters(relationships: TestClient, query: str, expected: list[str]) -> None:
    assert tokens(relationships.get(f"{BASE}?{query}")) == expected


@pytest.mark.parametrize("path", ["1001", "0.1001", f"0x{EVM}", EVM])
def test_path_forms(relationships: TestClient, path: str) -> None:
    assert len(tokens(relationships.get(f"/api/v1/accounts/{path}/tokens"))) == 4


@pytest.mark.parametrize("query", ["", "order=desc", "token.id=gte:2001"])
@pytest.mark.parametrize("probe", [True, False])
def test_following_next_links(relationships: TestClient, api_settings: Settings, query: str, probe: bool) -> None:
    reconfigure(relationships, dataclasses.replace(api_settings, pagination_probe=probe))
    whole = tokens(relationships.get(f"{BASE}?{query}"))
    seen: list[str] = []
    url: str | None = f"{BASE}?{query}&limit=1"
    while url:
        response = relationships.get(url)
        seen += tokens(response)
        url = response.json()["links"]["next"]
        assert len(seen) < 10
    assert seen == whole


@pytest.mark.parametrize(
    ("url", "status", "expected"),
    [
        ("/api/v1/accounts/3001/tokens", 404, ["Not found"]),
        ("/api/v1/accounts/0x" + "ab" * 20 + "/tokens", 404, ["Not found"]),
        ("/api/v1/accounts/x%00/tokens", 400, ["Invalid parameter: idOrAliasOrEvmAddress"]),
        (f"{BASE}?token.id=ne:2000", 400, ["Not equal (ne) comparison operator is not supported for token.id"]),
        (
            f"{BASE}?token.id=x&order=12&limit=a",
            400,
            ["Invalid parameter: token.id", "Invalid parameter: order", "Invalid parameter: limit"],
        ),
        (f"{BASE}?token.id={EVM}", 400, ["Invalid parameter: token.id"]),
        (f"{BASE}?token.id=%00", 400, ["Invalid parameter: token.id"]),
        (f"{BASE}?account.id=1", 400, ["Unknown query parameter: account.id"]),
    ],
)
def test_bad_input(relationships: TestClient, url: str, status: int, expected: list[str]) -> None:
    response = relationships.get(url)
    assert response.status_code == status
    assert messages(response) == expected


def test_no_relationships(relationships: TestClient) -> None:
    assert tokens(relationships.get("/api/v1/accounts/1002/tokens")) == []


def test_answers_match_the_reference_schema(relationships: TestClient) -> None:
    body = relationships.get(BASE + "?limit=3").json()
    assert reference_openapi.schema_errors("/api/v1/accounts/{idOrAliasOrEvmAddress}/tokens", body) == []
