"""GET /api/v1/tokens/{tokenId}/nfts, /nfts/{serialNumber} and /nfts/{serialNumber}/transactions against a real
PostgreSQL: filters, order, next links followed to the end (with and without the probe), 206 for a history
whose mint is missing, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

BASE = "/api/v1/tokens/1500/nfts"
T0 = 1234567890000000000


def _transfer(at: int, kind: str, number: int, sender: str | None, receiver: str | None) -> dict[str, Any]:
    return {
        "name": kind, "type": {"TOKENMINT": 37, "CRYPTOTRANSFER": 14, "TOKENBURN": 38}[kind],
        "consensus_timestamp": str(T0 + at), "valid_start_timestamp": str(T0 + at - 1), "payerAccountId": "0.0.8",
        "nft_transfer": [{"is_approval": kind == "CRYPTOTRANSFER", "receiver_account_id": receiver,
                          "sender_account_id": sender, "serial_number": number, "token_id": "0.0.1500"}],
    }  # fmt: skip


SETUP: dict[str, Any] = {
    "entities": [{"num": 1001}, {"num": 2001}, {"num": 1500, "type": "TOKEN"}],
    "tokens": [{"token_id": "0.0.1500", "symbol": "NFT", "created_timestamp": str(T0 + 1),
                "type": "NON_FUNGIBLE_UNIQUE"}],
    "nfts": [
        {"token_id": "0.0.1500", "serial_number": number, "account_id": "0.0.1001" if number % 2 else "0.0.2001",
         "created_timestamp": str(T0 + 2), "timestamp_range": f"[{T0 + 2 + 2 * number},)", "metadata": "m"}
        for number in range(1, 6)
    ] + [
        {"token_id": "0.0.1500", "serial_number": 1, "account_id": "0.0.2001", "created_timestamp": str(T0 + 2),
         "timestamp_range": f"[{T0 + 2},{T0 + 4})"},
    ],
    "transactions": [
        _transfer(2, "TOKENMINT", 1, None, "0.0.2001"),
        _transfer(4, "CRYPTOTRANSFER", 1, "0.0.2001", "0.0.1001"),
        _transfer(6, "CRYPTOTRANSFER", 2, "0.0.1001", "0.0.2001"),
    ],
}  # fmt: skip


@pytest.fixture
def nfts(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def serials(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["serial_number"] for item in response.json()["nfts"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def follow(client: TestClient, url: str, key: str, field: str) -> tuple[list[Any], list[str]]:
    seen: list[Any] = []
    links: list[str] = []
    next_url: str | None = url
    while next_url:
        body = client.get(next_url).json()
        seen += [item[field] for item in body[key]]
        next_url = body["links"]["next"]
        if next_url:
            links.append(next_url)
        assert len(links) < 20
    return seen, links


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [5, 4, 3, 2, 1]),
        ("order=asc", [1, 2, 3, 4, 5]),
        ("account.id=1001", [5, 3, 1]),
        ("account.id=ne:0.0.1001", [4, 2]),
        ("account.id=gt:0.0.2000&order=asc", [2, 4]),
        ("serialnumber=3", [3]),
        ("serialnumber=gt:1&serialnumber=lte:4", [4, 3, 2]),
        ("serialnumber=ne:2&account.id=lt:2001", [5, 3, 1]),
    ],
)
def test_list_filters(nfts: TestClient, query: str, expected: list[int]) -> None:
    response = nfts.get(f"{BASE}?{query}")
    assert serials(response) == expected
    assert response.headers["cache-control"] == "public, max-age=1"


@pytest.mark.parametrize("query", ["", "order=asc", "account.id=1001", "serialnumber=gt:1"])
@pytest.mark.parametrize("probe", [True, False])
def test_following_next_links(nfts: TestClient, api_settings: Settings, query: str, probe: bool) -> None:
    reconfigure(nfts, dataclasses.replace(api_settings, pagination_probe=probe))
    whole = serials(nfts.get(f"{BASE}?{query}"))
    seen, links = follow(nfts, f"{BASE}?{query}&limit=2", "nfts", "serial_number")
    assert seen == whole
    assert all("serialnumber=" in link for link in links)


def test_one_nft(nfts: TestClient) -> None:
    body = nfts.get(f"{BASE}/1").json()
    assert body["serial_number"] == 1 and body["account_id"] == "0.0.1001" and body["metadata"] == "bQ=="
    assert nfts.get(f"{BASE}/9").status_code == 404
    assert messages(nfts.get(f"{BASE}/9")) == ["Not found"]


def test_transactions(nfts: TestClient) -> None:
    response = nfts.get(f"{BASE}/1/transactions")
    assert response.status_code == 200
    body = response.json()
    assert [item["type"] for item in body["transactions"]] == ["CRYPTOTRANSFER", "TOKENMINT"]
    assert body["transactions"][0] == {
        "consensus_timestamp": "1234567890.000000004", "nonce": 0,
        "transaction_id": "0.0.8-1234567890-000000003", "type": "CRYPTOTRANSFER", "is_approval": True,
        "receiver_account_id": "0.0.1001", "sender_account_id": "0.0.2001",
    }  # fmt: skip
    asc = nfts.get(f"{BASE}/1/transactions?order=asc&limit=1").json()
    assert asc["links"]["next"] == f"{BASE}/1/transactions?order=asc&limit=1&timestamp=gt:1234567890.000000002"
    seen, _ = follow(nfts, f"{BASE}/1/transactions?order=asc&limit=1", "transactions", "consensus_timestamp")
    assert seen == ["1234567890.000000002", "1234567890.000000004"]
    one = nfts.get(f"{BASE}/1/transactions?timestamp=gte:1234567890.000000003&timestamp=ne:1").json()
    assert [item["consensus_timestamp"] for item in one["transactions"]] == ["1234567890.000000004"]
    assert nfts.get(f"{BASE}/1/transactions?timestamp=1234567890.000000002").json()["transactions"][0]["type"] == (
        "TOKENMINT"
    )
    assert nfts.get(f"{BASE}/1/transactions?timestamp=gt:1234567891").json()["transactions"] == []


def test_partial_content_without_the_mint(nfts: TestClient, ledger: Ledger) -> None:
    ledger.execute("update nft set created_timestamp = null where serial_number = 2")
    response = nfts.get(f"{BASE}/2/transactions")
    assert response.status_code == 206
    assert len(response.json()["transactions"]) == 1
    assert nfts.get(f"{BASE}/7/transactions").status_code == 200


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/api/v1/tokens/mirror/nfts", ["Invalid parameter: tokenid"]),
        ("/api/v1/tokens/0.0.%00/nfts/1", ["Invalid parameter: tokenid"]),
        (f"{BASE}/twenty", ["Invalid parameter: serialnumber"]),
        (f"{BASE}/0", ["Invalid parameter: serialnumber"]),
        (f"{BASE}/9223372036854775808/transactions", ["Invalid parameter: serialnumber"]),
        (f"{BASE}/1%00", ["Invalid parameter: serialnumber"]),
        (f"{BASE}/1?limit=1", ["Unknown query parameter: limit"]),
        (
            f"{BASE}?account.id=x&serialnumber=0&order=up&limit=0&spender.id=1",
            [
                "Invalid parameter: account.id",
                "Invalid parameter: serialnumber",
                "Invalid parameter: order",
                "Invalid parameter: limit",
                "Unknown query parameter: spender.id",
            ],
        ),
        (f"{BASE}?serialnumber=%00", ["Invalid parameter: serialnumber"]),
        (
            f"{BASE}/2/transactions?timestamp=now&order=down&limit=alot&result=success",
            [
                "Invalid parameter: timestamp",
                "Invalid parameter: order",
                "Invalid parameter: limit",
                "Unknown query parameter: result",
            ],
        ),
    ],
)
def test_bad_input(nfts: TestClient, url: str, expected: list[str]) -> None:
    response = nfts.get(url)
    assert response.status_code == 400
    assert messages(response) == expected


def test_answers_match_the_reference_schema(nfts: TestClient) -> None:
    checks = [
        ("/api/v1/tokens/{tokenId}/nfts", BASE),
        ("/api/v1/tokens/{tokenId}/nfts/{serialNumber}", f"{BASE}/1"),
        ("/api/v1/tokens/{tokenId}/nfts/{serialNumber}/transactions", f"{BASE}/1/transactions"),
    ]
    for path, url in checks:
        assert reference_openapi.schema_errors(path, nfts.get(url).json()) == [], url
