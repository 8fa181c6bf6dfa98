"""GET /api/v1/network/supply against a real PostgreSQL: current and historical supply, q, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.api.resources.network.network_supply import hbars
from ledgermirror.ledger.supply import unreleased_accounts, unreleased_ranges
from ledgermirror.settings import Settings

TOTAL = "5000000000000000000"

CURRENT: dict[str, Any] = {
    "accounts": [
        {"num": 1, "balance": 10, "balance_timestamp": "1000000003"},  # not an unreleased-supply account
        {"num": 2, "balance": 4_000_000_000_000_000_000, "balance_timestamp": "1000000000"},
        {"num": 42, "balance": 50, "balance_timestamp": "1000000000"},
        {"num": 100, "balance": 1, "balance_timestamp": "1000000001"},
        {"num": 750, "balance": 7, "balance_timestamp": "999999999"},
        {"num": 751, "balance": 1000, "balance_timestamp": "1000000009"},  # just past the last range
    ]
}

# Snapshots of 2023-11-14 22:13:20 (1700000000) and a few nanoseconds later, and of 2020-09-13 (1600000000).
HISTORY: dict[str, Any] = {
    "balances": [
        {"timestamp": 1600000000000000000, "id": 2, "balance": 10},
        {"timestamp": 1600000000000000000, "id": 42, "balance": 20},
        {"timestamp": 1700000000000000000, "id": 2, "balance": 1},
        {"timestamp": 1700000000000000000, "id": 42, "balance": 1},
        {"timestamp": 1700000000000000005, "id": 1, "balance": 10},
        {"timestamp": 1700000000000000005, "id": 2, "balance": 4_000_000_000_000_000_000},
        {"timestamp": 1700000000000000005, "id": 42, "balance": 50},
        {"timestamp": 1700000000000000005, "id": 100, "balance": 1},
    ]
}


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


@pytest.fixture
def current(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(CURRENT)
    return client


@pytest.fixture
def history(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(HISTORY)
    return client


def test_current_supply(current: TestClient) -> None:
    response = current.get("/api/v1/network/supply")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60"
    body = response.json()
    assert body == {
        "released_supply": str(5_000_000_000_000_000_000 - 4_000_000_000_000_000_000 - 58),
        "timestamp": "1.000000001",
        "total_supply": TOTAL,
    }
    assert list(body) == ["released_supply", "timestamp", "total_supply"]


def test_current_supply_ignores_null_balances(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"accounts": [{"num": 2, "balance": None, "balance_timestamp": "5"}, {"num": 44, "balance": 3}]})
    assert client.get("/api/v1/network/supply").json() == {
        "released_supply": str(5_000_000_000_000_000_000 - 3),
        "timestamp": "0.000000005",
        "total_supply": TOTAL,
    }


@pytest.mark.parametrize("setup", [{}, {"accounts": [{"num": 1, "balance": 5, "balance_timestamp": "9"}]}])
def test_no_unreleased_accounts_is_404(client: TestClient, ledger: Ledger, setup: dict[str, Any]) -> None:
    ledger.load(setup)
    response = client.get("/api/v1/network/supply")
    assert response.status_code == 404
    assert messages(response) == ["Not found"]
    assert "cache-control" not in response.headers


def test_accounts_without_balance_timestamp_are_404(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"accounts": [{"num": 2, "balance": 5}]})
    assert client.get("/api/v1/network/supply").status_code == 404


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("q=totalcoins", "50000000000.00000000"),
        ("q=TotalCoins", "50000000000.00000000"),
        ("q=circulating", "9999999999.99999942"),
        ("q=CIRCULATING", "9999999999.99999942"),
    ],
)
def test_q_answers_plain_text(current: TestClient, query: str, text: str) -> None:
    response = current.get(f"/api/v1/network/supply?{query}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60"
    assert response.text == text


def test_q_with_timestamp(history: TestClient) -> None:
    response = history.get("/api/v1/network/supply?q=circulating&timestamp=1700000000")
    assert response.text == "49999999999.99999998"


def test_q_still_needs_data(client: TestClient) -> None:
    response = client.get("/api/v1/network/supply?q=totalcoins")
    assert response.status_code == 404
    assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    "query",
    [
        "timestamp=1700000000",
        "timestamp=1700000000.000000000",
        "timestamp=eq:1700000000",
        "timestamp=eq:1700000000.000000000",
        "timestamp=1700000000.000000001",
        "timestamp=1700000000.000000004",
        "timestamp=lte:1700000000.000000000",
        "timestamp=lt:1700000000.000000005",
        "timestamp=gte:1700000000.000000000&timestamp=lte:1700000000.000000000",
        "timestamp=gt:0&timestamp=lt:1700000000.000000005",
        "timestamp=gte:1700000000.000000000&timestamp=lt:1700000000.000000005",
        "TIMESTAMP=1700000000",
    ],
)
def test_timestamp_picks_the_snapshot_as_of(history: TestClient, query: str) -> None:
    response = history.get(f"/api/v1/network/supply?{query}")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "released_supply": "4999999999999999998",
        "timestamp": "1700000000.000000000",
        "total_supply": TOTAL,
    }


@pytest.mark.parametrize(
    "query",
    [
        "timestamp=1700000000.000000005",
        "timestamp=lte:1700000001",
        "timestamp=gt:1700000000&timestamp=lt:1700000001",
        "timestamp=gte:1699999999.5&timestamp=lte:1700000001",
    ],
)
def test_timestamp_latest_snapshot(history: TestClient, query: str) -> None:
    body = history.get(f"/api/v1/network/supply?{query}").json()
    assert body["released_supply"] == str(5_000_000_000_000_000_000 - 4_000_000_000_000_000_000 - 51)
    assert body["timestamp"] == "1700000000.000000005"


def test_timestamp_fraction_is_right_padded(history: TestClient) -> None:
    # 1700000000.5 is half a second later, after every snapshot; the reference would read it as 5 ns.
    body = history.get("/api/v1/network/supply?timestamp=1700000000.5").json()
    assert body["timestamp"] == "1700000000.000000005"


def test_each_account_takes_its_latest_snapshot_in_the_window(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "balances": [
                {"balance": 10, "id": 1, "timestamp": 1000000005},
                {"balance": 1, "id": 2, "timestamp": 1000000000},
                {"balance": 2, "id": 2, "timestamp": 1000000002},
                {"balance": 4000000000000000000, "id": 2, "timestamp": 1000000005},
                {"balance": 3, "id": 42, "timestamp": 1000000000},
                {"balance": 50, "id": 42, "timestamp": 1000000005},
                {"balance": 1, "id": 100, "timestamp": 1000000005},
            ]
        }
    )
    assert client.get("/api/v1/network/supply?timestamp=gt:0&timestamp=lt:1.000000005").json() == {
        "released_supply": "4999999999999999995",
        "timestamp": "1.000000002",
        "total_supply": TOTAL,
    }
    assert client.get("/api/v1/network/supply?timestamp=gt:1.000000000&timestamp=lt:1.000000005").json() == {
        "released_supply": "4999999999999999998",
        "timestamp": "1.000000002",
        "total_supply": TOTAL,
    }


def test_window_reaches_back_to_the_previous_month_only(client: TestClient, ledger: Ledger) -> None:
    january, march = 1673740800, 1678838400  # 2023-01-15, 2023-03-15
    ledger.load({"balances": [{"timestamp": january * 10**9, "id": 2, "balance": 5}]})
    assert client.get(f"/api/v1/network/supply?timestamp={march}").status_code == 404
    february = 1676419200  # 2023-02-15: January is the previous month
    assert client.get(f"/api/v1/network/supply?timestamp={february}").json()["timestamp"] == f"{january}.000000000"


@pytest.mark.parametrize(
    "query",
    [
        "timestamp=0.0001",
        "timestamp=eq:0.0001",
        "timestamp=lt:0.0001",
        "timestamp=gt:999",
        "timestamp=gte:1600000000",  # no upper bound: the window is the months before 2262
        "timestamp=lt:1600000000",
    ],
)
def test_timestamp_not_found(history: TestClient, query: str) -> None:
    response = history.get(f"/api/v1/network/supply?{query}")
    assert response.status_code == 404
    assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("timestamp=cof%00fee", ["Invalid parameter: timestamp"]),
        ("timestamp=ne:1", ["Invalid parameter: Not equals (ne) operator is not supported for timestamp"]),
        ("timestamp=foo", ["Invalid parameter: timestamp"]),
        ("timestamp=equal:1", ["Invalid parameter: timestamp"]),
        ("timestamp=lte:1.2.3", ["Invalid parameter: timestamp"]),
        ("timestamp=1.0123456789", ["Invalid parameter: timestamp"]),
        ("timestamp=", ["Invalid parameter: timestamp"]),
        ("timestamp=-1", ["Invalid parameter: timestamp"]),
        ("timestamp=GT:1", ["Invalid parameter: timestamp"]),
        ("timestamp=99999999999999999", ["Invalid parameter: timestamp"]),
        ("timestamp=gt:2&timestamp=1", ["Lower timestamp cannot be higher than upper timestamp"]),
        ("timestamp=gt:2&timestamp=lt:1", ["Lower timestamp cannot be higher than upper timestamp"]),
        ("timestamp=gte:2&timestamp=lte:1", ["Lower timestamp cannot be higher than upper timestamp"]),
        ("timestamp=gt:2&timestamp=lte:2", ["Lower timestamp cannot be higher than upper timestamp"]),
        ("timestamp=lt:0", ["Lower timestamp cannot be higher than upper timestamp"]),
        (
            "timestamp=1&timestamp=2&timestamp=3",
            ["Parameter values count exceeds maximum number allowed: timestamp count: 3 max: 2"],
        ),
        ("q=foo", ["Invalid parameter: q"]),
        ("q=", ["Invalid parameter: q"]),
        ("q=eq:totalcoins", ["Invalid parameter: q"]),
        ("q=totalcoins&q=circulating", ["Invalid parameter: q"]),
        ("limit=1", ["Unknown query parameter: limit"]),
        (
            "timestamp=foo&limit=1&q=bar",
            ["Invalid parameter: timestamp", "Invalid parameter: q", "Unknown query parameter: limit"],
        ),
    ],
)
def test_bad_input(history: TestClient, query: str, expected: list[str]) -> None:
    response = history.get(f"/api/v1/network/supply?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_configured_realm(client: TestClient, ledger: Ledger, api_settings: Settings) -> None:
    reconfigure(client, dataclasses.replace(api_settings, realm=1))
    ledger.load(
        {
            "accounts": [
                {"realm": 1, "num": 2, "balance": 5, "balance_timestamp": "7"},
                {"realm": 0, "num": 2, "balance": 100, "balance_timestamp": "8"},
            ]
        }
    )
    assert client.get("/api/v1/network/supply").json() == {
        "released_supply": "4999999999999999995",
        "timestamp": "0.000000007",
        "total_supply": TOTAL,
    }


def test_unreleased_accounts() -> None:
    accounts = unreleased_accounts(0, 0)
    assert len(accounts) == 548
    assert accounts[:3] == [2, 42, 44]
    assert accounts[-1] == 750
    assert 72 not in accounts and 88 not in accounts and 199 not in accounts and 751 not in accounts
    assert unreleased_accounts(1, 2)[0] == (1 << 54) | (2 << 38) | 2


EDGES = (1, 2, 3, 41, 42, 43, 44, 71, 72, 73, 87, 88, 98, 99, 100, 101, 199, 200, 349, 350, 399, 400, 750, 751)
"""Every range's first and last number and the numbers just outside it."""


def test_range_edges_current_and_historical(client: TestClient, ledger: Ledger) -> None:
    balances = {num: 1 << index for index, num in enumerate(EDGES)}  # each account its own bit of the sum
    ledger.load(
        {
            "accounts": [
                {"num": num, "balance": balance, "balance_timestamp": "7"} for num, balance in balances.items()
            ],
            "balances": [{"timestamp": 7, "id": num, "balance": balance} for num, balance in balances.items()],
        }
    )
    unreleased = sum(balance for num, balance in balances.items() if num in set(unreleased_accounts(0, 0)))
    expected = {
        "released_supply": str(5_000_000_000_000_000_000 - unreleased),
        "timestamp": "0.000000007",
        "total_supply": TOTAL,
    }
    assert client.get("/api/v1/network/supply").json() == expected
    assert client.get("/api/v1/network/supply?timestamp=lte:0.000000007").json() == expected


def test_unreleased_ranges_cover_exactly_the_unreleased_accounts() -> None:
    for shard, realm in ((0, 0), (1, 2)):
        ranges = unreleased_ranges(shard, realm)
        assert len(ranges) == 14  # seven ranges, bound as 14 numbers: no per-request list of 548 ids
        covered = [
            account for index in range(7) for account in range(ranges[f"low{index}"], ranges[f"high{index}"] + 1)
        ]
        assert covered == unreleased_accounts(shard, realm)


@pytest.mark.parametrize(
    ("tinybars", "text"),
    [
        (5_000_000_000_000_000_000, "50000000000.00000000"),
        (4_945_200_000_000_000_000, "49452000000.00000000"),
        (100_000_000, "1.00000000"),
        (99_999_999, "0.99999999"),
        (1, "0.00000001"),
        (0, "0.00000000"),
        (-5, "-0.00000005"),
    ],
)
def test_hbars(tinybars: int, text: str) -> None:
    assert hbars(tinybars) == text


def test_the_unreleased_ranges_ascend_so_their_span_bounds_them_all() -> None:
    """The supply statement bounds its id condition by the first range's start and the last one's end."""
    from ledgermirror.ledger.supply import UNRELEASED_SUPPLY_NUMS

    flat = [bound for pair in UNRELEASED_SUPPLY_NUMS for bound in pair]
    assert flat == sorted(flat) and all(low <= high for low, high in UNRELEASED_SUPPLY_NUMS)
