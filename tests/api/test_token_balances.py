"""GET /api/v1/tokens/{tokenId}/balances against a real PostgreSQL: live balances and balances at a snapshot,
every filter, next links followed to the end, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.clock import SystemClock
from ledgermirror.settings import Settings

BASE = "/api/v1/tokens/0.0.7/balances"
KEY = "6ceecd8bb224da4914d53f292e5624f6f4cf8c134c920e1cac8d06f879df5819"
SNAP1, SNAP2 = 1566560001000000000, 1566560003000000000
SETUP: dict[str, Any] = {
    "accounts": [{"num": num, "public_key": KEY if num == 12 else None} for num in (11, 12, 13, 14)],
    "tokens": [{"token_id": "0.0.7", "symbol": "SEVEN", "created_timestamp": "1", "decimals": 3,
                "type": "FUNGIBLE_COMMON"}],
    "tokenaccounts": [
        {"token_id": "0.0.7", "account_id": f"0.0.{num}", "balance": num * 10, "balance_timestamp": str(num),
         "created_timestamp": "2", "associated": num != 14}
        for num in (11, 12, 13, 14)
    ],
    "balances": [
        {"timestamp": SNAP1, "id": 2, "balance": 1},
        {"timestamp": SNAP1, "id": 11, "balance": 1, "tokens": [{"token_num": 7, "balance": 1}]},
        {"timestamp": SNAP2, "id": 2, "balance": 1},
        {"timestamp": SNAP2, "id": 12, "balance": 1, "tokens": [{"token_num": 7, "balance": 120}]},
        {"timestamp": SNAP2, "id": 13, "balance": 1, "tokens": [{"token_num": 7, "balance": 0}]},
    ],
}  # fmt: skip


@pytest.fixture
def balances(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    client.app.state.ctx.clock = SystemClock()  # type: ignore[attr-defined]  # "now" bounds the snapshot search
    return client


def pairs(response: Any) -> list[tuple[str, int]]:
    assert response.status_code == 200, response.text
    return [(item["account"], item["balance"]) for item in response.json()["balances"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_live_balances(balances: TestClient) -> None:
    response = balances.get(BASE)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["timestamp"] == "0.000000013"
    assert pairs(response) == [("0.0.13", 130), ("0.0.12", 120), ("0.0.11", 110)]
    assert {item["decimals"] for item in body["balances"]} == {3}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("order=asc", ["0.0.11", "0.0.12", "0.0.13"]),
        ("account.id=0.0.12", ["0.0.12"]),
        ("account.id=gte:12&account.id=ne:13", ["0.0.12"]),
        ("account.balance=gt:110", ["0.0.13", "0.0.12"]),
        ("account.balance=lte:110", ["0.0.11"]),
        (f"account.publickey={KEY}", ["0.0.12"]),
        (f"account.publickey=0x{KEY.upper()}", ["0.0.12"]),
        ("account.id=14", []),
        (f"timestamp={SNAP1 // 10**9}.000000000", ["0.0.11"]),
        (
            f"timestamp=gte:{SNAP1 // 10**9}.000000001&timestamp=lte:{SNAP2 // 10**9}",
            ["0.0.13", "0.0.12", "0.0.11"],
        ),
        (f"timestamp=gte:{SNAP1 // 10**9}", []),  # no snapshot from the month before now's month on
        (f"timestamp=lt:{SNAP2 // 10**9}&timestamp=gt:{SNAP1 // 10**9}", []),
        (f"timestamp={SNAP2 // 10**9}&account.balance=gt:0", ["0.0.12", "0.0.11"]),
        (f"timestamp={SNAP2 // 10**9}&account.publickey={KEY}", ["0.0.12"]),
        (f"timestamp={SNAP2 // 10**9}&timestamp=ne:{SNAP2 // 10**9}", ["0.0.11"]),
        ("timestamp=1", []),
    ],
)
def test_filters(balances: TestClient, query: str, expected: list[str]) -> None:
    assert [account for account, _ in pairs(balances.get(f"{BASE}?{query}"))] == expected


def test_snapshot_balances(balances: TestClient) -> None:
    body = balances.get(f"{BASE}?timestamp={SNAP2 // 10**9}").json()
    assert body["timestamp"] == "1566560003.000000000"
    assert [(item["account"], item["balance"]) for item in body["balances"]] == [
        ("0.0.13", 0), ("0.0.12", 120), ("0.0.11", 1)
    ]  # fmt: skip
    empty = balances.get(f"{BASE}?timestamp=1").json()
    assert empty == {"timestamp": None, "balances": [], "links": {"next": None}}
    unknown = balances.get("/api/v1/tokens/0.0.8/balances").json()
    assert unknown == {"timestamp": None, "balances": [], "links": {"next": None}}


@pytest.mark.parametrize("query", ["", "order=asc", f"timestamp={SNAP2 // 10**9}", "account.balance=gte:0"])
@pytest.mark.parametrize("probe", [True, False])
def test_following_next_links(balances: TestClient, api_settings: Settings, query: str, probe: bool) -> None:
    reconfigure(balances, dataclasses.replace(api_settings, pagination_probe=probe))
    whole = pairs(balances.get(f"{BASE}?{query}"))
    seen: list[tuple[str, int]] = []
    url: str | None = f"{BASE}?{query}&limit=1"
    while url:
        response = balances.get(url)
        seen += pairs(response)
        url = response.json()["links"]["next"]
        assert url is None or "account.id=" in url
        assert len(seen) < 10
    assert seen == whole


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/api/v1/tokens/2abcd/balances", ["Invalid parameter: tokenid"]),
        (
            f"{BASE}?account.id=lte:0.1.2.3&account.balance=gt:-2&account.publickey=-2&timestamp=-1.2&order=any"
            "&slot=1",
            [
                "Invalid parameter: account.id",
                "Invalid parameter: account.balance",
                "Invalid parameter: account.publickey",
                "Invalid parameter: timestamp",
                "Invalid parameter: order",
                "Unknown query parameter: slot",
            ],
        ),
        (f"{BASE}?account.balance=9223372036854775808", ["Invalid parameter: account.balance"]),
        (f"{BASE}?account.publickey=%00", ["Invalid parameter: account.publickey"]),
        (f"{BASE}?account.publickey=ne:{KEY}", ["Invalid parameter: account.publickey"]),
        (f"{BASE}?consensus=hashgraph", ["Unknown query parameter: consensus"]),
    ],
)
def test_bad_input(balances: TestClient, url: str, expected: list[str]) -> None:
    response = balances.get(url)
    assert response.status_code == 400
    assert messages(response) == expected


def test_answers_match_the_reference_schema(balances: TestClient) -> None:
    for url in (BASE, f"{BASE}?timestamp=1"):
        errors = reference_openapi.schema_errors("/api/v1/tokens/{tokenId}/balances", balances.get(url).json())
        assert errors == [], url
