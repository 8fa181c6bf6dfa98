"""GET /api/v1/balances: live balances, snapshot balances at a timestamp (the treasury snapshot and the monthly
window), every parameter, pagination and bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/balances"
KEY_A = "519a008fabde4d28d68293c71fcdcdcca38d8fae6102a832b31e802f257fd1d9"
KEY_B = "3c3d546321ff6f63d701d2ec5c277095874e19f4a235bee1e6bb19258bf362be"
APRIL = 1_680_308_100_000_000_000  # 2023-04-01T00:15Z
MAY = 1_682_901_000_000_000_000  # 2023-05-01T00:30Z
JUNE = 1_686_312_900_000_000_000  # 2023-06-09T12:15Z

SETUP: dict[str, Any] = {
    "accounts": [
        {"num": 2, "balance": 20, "balance_timestamp": 100},
        {"num": 7, "balance": 70, "balance_timestamp": 300, "public_key": KEY_A},
        {
            "num": 8,
            "balance": 80,
            "balance_timestamp": 200,
            "alias": "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ",
            "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec",
            "public_key": KEY_B,
        },
        {"num": 9, "balance": 90, "public_key": KEY_A},
        {"num": 11, "type": "TOPIC", "balance": 5},
    ],
    "contracts": [{"num": 10, "balance": 100, "balance_timestamp": 150}],
    "tokenaccounts": [
        {"token_id": "0.0.5000", "account_id": "0.0.8", "balance": 5, "created_timestamp": "1"},
        {"token_id": "0.0.4000", "account_id": "0.0.8", "balance": 4, "created_timestamp": "1"},
        {
            "token_id": "0.0.3000",
            "account_id": "0.0.8",
            "balance": 3,
            "created_timestamp": "1",
            "associated": False,
        },
    ],
    "balances": [
        {"timestamp": APRIL, "id": 2, "balance": 201},
        {"timestamp": APRIL, "id": 7, "balance": 71, "tokens": [{"token_num": 5000, "balance": 51}]},
        {"timestamp": APRIL, "id": 8, "balance": 81},
        {"timestamp": MAY, "id": 2, "balance": 202},
        {"timestamp": MAY, "id": 8, "balance": 82, "tokens": [{"token_num": 5000, "balance": 52}]},
        {"timestamp": JUNE, "id": 2, "balance": 203},
        {"timestamp": JUNE, "id": 9, "balance": 93},
    ],
}


@pytest.fixture
def balances(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def rows(response: Any) -> list[tuple[str, int]]:
    assert response.status_code == 200, response.text
    return [(item["account"], item["balance"]) for item in response.json()["balances"]]


def messages(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 400, response.text
    found: list[dict[str, str]] = response.json()["_status"]["messages"]
    return found


def test_live_balances(balances: TestClient) -> None:
    response = balances.get(URL)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["timestamp"] == "0.000000300"
    assert [(b["account"], b["balance"]) for b in body["balances"]] == [
        ("0.0.10", 100),
        ("0.0.9", 90),
        ("0.0.8", 80),
        ("0.0.7", 70),
        ("0.0.2", 20),
    ]
    assert body["balances"][2]["tokens"] == [
        {"token_id": "0.0.5000", "balance": 5},
        {"token_id": "0.0.4000", "balance": 4},
    ]
    assert body["links"]["next"] is None
    assert reference_schema_errors(URL, body) == []
    ascending = balances.get(f"{URL}?account.id=8&order=asc").json()
    assert ascending["timestamp"] == "0.000000200"
    assert [t["token_id"] for t in ascending["balances"][0]["tokens"]] == ["0.0.4000", "0.0.5000"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("account.id=0.0.8", [("0.0.8", 80)]),
        ("account.id=8", [("0.0.8", 80)]),
        ("account.id=7&account.id=9", [("0.0.9", 90), ("0.0.7", 70)]),
        ("account.id=gte:0.0.8&account.id=lt:10", [("0.0.9", 90), ("0.0.8", 80)]),
        ("account.id=ne:8&account.id=lte:8", [("0.0.7", 70), ("0.0.2", 20)]),
        ("account.id=ac384c53f03855fa1b3616052f8ba32c6c2a2fec", [("0.0.8", 80)]),
        ("account.id=0xAC384C53F03855FA1B3616052F8BA32C6C2A2FEC", [("0.0.8", 80)]),
        ("account.id=0x0000000000000000000000000000000000000009", [("0.0.9", 90)]),
        ("account.id=KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ", [("0.0.8", 80)]),
        ("account.id=7&account.id=ac384c53f03855fa1b3616052f8ba32c6c2a2fee", [("0.0.7", 70)]),
        ("account.id=ac384c53f03855fa1b3616052f8ba32c6c2a2fee", []),
        ("account.id=AAAQEAYEAUDAOCAJCAIREEYUCULBOGAZ", []),
        ("account.balance=gt:70&account.balance=lte:90", [("0.0.9", 90), ("0.0.8", 80)]),
        ("account.balance=80", [("0.0.8", 80)]),
        (f"account.publickey={KEY_A}", [("0.0.9", 90), ("0.0.7", 70)]),
        (f"account.publickey=0x{KEY_A.upper()}", [("0.0.9", 90), ("0.0.7", 70)]),
        (f"account.publickey=302a300506032b6570032100{KEY_B}", [("0.0.8", 80)]),
        (f"account.publickey={KEY_A}&account.publickey={KEY_B}", []),
        ("limit=2", [("0.0.10", 100), ("0.0.9", 90)]),
    ],
)
def test_live_filters(balances: TestClient, query: str, expected: list[tuple[str, int]]) -> None:
    assert rows(balances.get(f"{URL}?{query}")) == expected


@pytest.mark.parametrize(
    ("query", "timestamp", "expected"),
    [
        # the newest treasury snapshot at or before the timestamp; per account its newest row in that month
        ("timestamp=1686312900", "1686312900.000000000", [("0.0.9", 93), ("0.0.2", 203)]),
        ("timestamp=lte:1686312899", "1682901000.000000000", [("0.0.8", 82), ("0.0.2", 202)]),
        ("timestamp=lt:1682901000", "1680308100.000000000", [("0.0.8", 81), ("0.0.7", 71), ("0.0.2", 201)]),
        (
            "timestamp=gt:1680308100&timestamp=lt:1690000000",
            "1686312900.000000000",
            [("0.0.9", 93), ("0.0.2", 203)],
        ),
        (
            "timestamp=ne:1686312900&timestamp=lte:1686312900",
            "1682901000.000000000",
            [("0.0.8", 82), ("0.0.2", 202)],
        ),
        ("timestamp=lte:1680308099", None, []),
        ("timestamp=gt:1686312900", None, []),
        ("timestamp=gt:1690000000&timestamp=lt:1680000000", None, []),
        ("timestamp=1682901000&account.id=8", "1682901000.000000000", [("0.0.8", 82)]),
        ("timestamp=1682901000&account.balance=gt:100", "1682901000.000000000", [("0.0.2", 202)]),
        (f"timestamp=1680308100&account.publickey={KEY_A}", "1680308100.000000000", [("0.0.7", 71)]),
        (f"timestamp=1680308100&account.publickey={'1' * 64}", None, []),
        ("timestamp=1680308100&order=asc&limit=1", "1680308100.000000000", [("0.0.2", 201)]),
    ],
)
def test_snapshot_balances(balances: TestClient, query: str, timestamp: str | None, expected: list[Any]) -> None:
    response = balances.get(f"{URL}?{query}")
    assert rows(response) == expected
    assert response.json()["timestamp"] == timestamp


def test_snapshot_token_balances(balances: TestClient) -> None:
    found = {b["account"]: b["tokens"] for b in balances.get(f"{URL}?timestamp=1682901000").json()["balances"]}
    assert found["0.0.8"] == [{"token_id": "0.0.5000", "balance": 52}]
    april = {b["account"]: b["tokens"] for b in balances.get(f"{URL}?timestamp=1680308100").json()["balances"]}
    assert april["0.0.7"] == [{"token_id": "0.0.5000", "balance": 51}]


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("snapshot", ["", "&timestamp=1680308100"])
def test_pagination_to_the_end(balances: TestClient, api_settings: Settings, probe: bool, snapshot: str) -> None:
    reconfigure(balances, dataclasses.replace(api_settings, pagination_probe=probe))
    url, seen = f"{URL}?limit=2&order=asc{snapshot}", []
    while url:
        response = balances.get(url)
        seen += [account for account, _ in rows(response)]
        url = response.json()["links"]["next"]
    assert seen == (["0.0.2", "0.0.7", "0.0.8"] if snapshot else ["0.0.2", "0.0.7", "0.0.8", "0.0.9", "0.0.10"])
    link = balances.get(f"{URL}?limit=1&timestamp=1680308100").json()["links"]["next"]
    assert link == "/api/v1/balances?limit=1&timestamp=1680308100&account.id=lt:0.0.8"


EQUALS_ONLY = "EVM address or alias only supports equals operator"
ONLY_ONE = "Only one EVM address or alias is allowed."


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "account.balance=gt:-2&account.publickey=-2&timestamp=-1.2&order=any&token.id=0.0.45678",
            [
                "Invalid parameter: account.balance",
                "Invalid parameter: account.publickey",
                "Invalid parameter: timestamp",
                "Invalid parameter: order",
                "Unknown query parameter: token.id",
            ],
        ),
        ("account.balance=9223372036854775808", ["Invalid parameter: account.balance"]),
        ("account.id=0.0.ac384c53f03855fa1b3616052f8ba32c6c2a2fec", ["Invalid parameter: account.id"]),
        ("account.id=0.0.KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ", ["Invalid parameter: account.id"]),
        ("account.id=0.1.2.3", ["Invalid parameter: account.id"]),
        ("account.id=account.id=abcd", ["Invalid parameter: account.id"]),
        ("account.id=%00", ["Invalid parameter: account.id"]),
        ("account.publickey=%00abc", ["Invalid parameter: account.publickey"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("timestamp=1.2.3", ["Invalid parameter: timestamp"]),
    ],
)
def test_bad_input(client: TestClient, query: str, expected: list[str]) -> None:
    assert [item["message"] for item in messages(client.get(f"{URL}?{query}"))] == expected


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("account.id=gte:ac384c53f03855fa1b3616052f8ba32c6c2a2fec", EQUALS_ONLY),
        ("account.id=lt:0x0000000000000000000000000000000000000008", EQUALS_ONLY),
        ("account.id=ne:KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ", EQUALS_ONLY),
        (
            "account.id=ac384c53f03855fa1b3616052f8ba32c6c2a2fec&account.id=AAAQEAYEAUDAOCAJCAIREEYUCULBOGAZ",
            ONLY_ONE,
        ),
        (
            "account.id=0x0000000000000000000000000000000000000008&account.id=0x0000000000000000000000000000000000000009",
            ONLY_ONE,
        ),
    ],
)
def test_evm_address_and_alias_rules(client: TestClient, query: str, detail: str) -> None:
    assert messages(client.get(f"{URL}?{query}")) == [
        {"message": "Invalid parameter: account.id", "detail": detail}
    ]
