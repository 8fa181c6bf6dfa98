"""GET /api/v1/accounts/{id}/rewards against a real PostgreSQL: path forms and existence, the timestamp filter,
pagination, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"
EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead57"
UNKNOWN_EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead50"
BASE = "/api/v1/accounts/1001/rewards"
T1, T2, T3, T4 = "1234567890.000011111", "1234567890.000022222", "1234567890.000033333", "1234567891.000000000"

SETUP: dict[str, Any] = {
    "accounts": [
        {"num": 1001, "alias": ALIAS, "evm_address": EVM},
        {"num": 800},
        {"num": 900, "deleted": True},
        {"num": 7001, "type": "CONTRACT"},
    ],
    "stakingRewardTransfers": [
        {"account_id": "0.0.1001", "amount": 10, "consensus_timestamp": "1234567890000011111"},
        {"account_id": "0.0.1001", "amount": 12, "consensus_timestamp": "1234567890000022222"},
        {"account_id": "0.0.1001", "amount": 13, "consensus_timestamp": "1234567890000033333"},
        {"account_id": "0.0.1001", "amount": 9223372036854775807, "consensus_timestamp": "1234567891000000000"},
        {"account_id": "0.0.800", "amount": 99, "consensus_timestamp": "1234567890000022222"},
        {"account_id": "0.0.7001", "amount": 7, "consensus_timestamp": "5"},
    ],
}


@pytest.fixture
def rewards(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def stamps(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["timestamp"] for item in response.json()["rewards"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_encodings_and_default_order(rewards: TestClient) -> None:
    response = rewards.get(BASE)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["rewards"][0] == {"account_id": "0.0.1001", "amount": 9223372036854775807, "timestamp": T4}
    assert list(body["rewards"][0]) == ["account_id", "amount", "timestamp"]
    assert b'"amount":9223372036854775807' in response.content
    assert stamps(response) == [T4, T3, T2, T1]
    assert [item["amount"] for item in body["rewards"][1:]] == [13, 12, 10]


@pytest.mark.parametrize(
    "account",
    [
        "1001",
        "0.1001",
        "0.0.1001",
        "0x00000000000000000000000000000000000003e9",
        ALIAS,
        "0." + ALIAS,
        "0.0." + ALIAS,
        EVM,
        "0x" + EVM,
        "0.0." + EVM,
    ],
)
def test_account_path_forms(rewards: TestClient, account: str) -> None:
    assert stamps(rewards.get(f"/api/v1/accounts/{account}/rewards")) == [T4, T3, T2, T1]


@pytest.mark.parametrize("account", ["0.0.900", "0.0.7001"])
def test_any_existing_entity_counts(rewards: TestClient, account: str) -> None:
    response = rewards.get(f"/api/v1/accounts/{account}/rewards")
    assert response.status_code == 200
    assert [item["account_id"] for item in response.json()["rewards"]] == (
        [] if account == "0.0.900" else [account]
    )


def test_existing_account_without_rewards(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"entities": [{"num": 1001}]})
    response = client.get(BASE)
    assert response.json() == {"rewards": [], "links": {"next": None}}
    assert response.headers["cache-control"] == "public, max-age=60"


@pytest.mark.parametrize(
    ("account", "message"),
    [
        ("404", "Not found"),
        ("0.404", "Not found"),
        ("0.0.404", "Not found"),
        ("0x0000000000000000000000000000000000000194", "Not found"),
        (UNKNOWN_EVM, "Not found"),
        ("0.0." + UNKNOWN_EVM, "Not found"),
        ("AAAQEAYEAUDAOCAJBIFQYDIOB4", "No account with a matching alias found"),
        ("0.AAAQEAYEAUDAOCAJBIFQYDIOB4", "No account with a matching alias found"),
    ],
)
def test_unknown_account_is_404_before_query_errors(rewards: TestClient, account: str, message: str) -> None:
    response = rewards.get(f"/api/v1/accounts/{account}/rewards?limit=bad&foo=1")
    assert response.status_code == 404
    assert messages(response) == [message]
    assert "cache-control" not in response.headers


@pytest.mark.parametrize(
    "account",
    [
        "%00",
        "0.0.10%0001",
        "x",
        "0.x",
        "0.0.x",
        "-92233720368547758080",
        "0.-1",
        "0.0.-1",
        "ABC1",
        "1.2.3.4",
        "9.9." + EVM,
    ],
)
def test_invalid_account_is_400_before_query_errors(rewards: TestClient, account: str) -> None:
    response = rewards.get(f"/api/v1/accounts/{account}/rewards?limit=bad")
    assert response.status_code == 400
    assert messages(response) == ["Invalid parameter: idOrAliasOrEvmAddress"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"timestamp={T2}", [T2]),
        (f"timestamp=eq:{T2}", [T2]),
        ("timestamp=1234567891", [T4]),
        ("timestamp=1234567891.0", [T4]),
        (f"timestamp={T1}&timestamp={T3}&timestamp=1", [T3, T1]),
        (f"timestamp={T1}&timestamp={T3}&timestamp=gt:{T1}", [T3]),
        (f"timestamp=gt:{T2}", [T4, T3]),
        (f"timestamp=gte:{T2}", [T4, T3, T2]),
        (f"timestamp=lt:{T2}", [T1]),
        (f"timestamp=lte:{T2}", [T2, T1]),
        (f"timestamp=gt:{T1}&timestamp=lt:{T4}", [T3, T2]),
        (f"timestamp=gt:{T3}&timestamp=lt:{T2}", []),
        ("timestamp=gte:0", [T4, T3, T2, T1]),
        (f"TimeStamp={T2}", [T2]),
    ],
)
def test_timestamp(rewards: TestClient, query: str, expected: list[str]) -> None:
    assert stamps(rewards.get(f"{BASE}?{query}")) == expected


def test_order(rewards: TestClient) -> None:
    assert stamps(rewards.get(f"{BASE}?order=asc")) == [T1, T2, T3, T4]
    assert stamps(rewards.get(f"{BASE}?order=ASC")) == [T1, T2, T3, T4]
    assert stamps(rewards.get(f"{BASE}?order=asc&order=desc")) == [T4, T3, T2, T1]


def test_pagination_follows_next_links_to_the_end(rewards: TestClient) -> None:
    for order, expected, links in [
        ("asc", [T1, T2, T3, T4], [f"{BASE}?order=asc&limit=2&timestamp=gt:{T2}"]),
        ("desc", [T4, T3, T2, T1], [f"{BASE}?order=desc&limit=2&timestamp=lt:{T3}"]),
    ]:
        seen: list[str] = []
        followed: list[str] = []
        url: str | None = f"{BASE}?order={order}&limit=2"
        while url:
            response = rewards.get(url)
            seen += stamps(response)
            url = response.json()["links"]["next"]
            if url:
                followed.append(url)
                assert response.headers["link"] == f'<{url}>; rel="next"'
        assert seen == expected
        assert followed == links


def test_next_link_moves_the_bound_in_the_paging_direction(rewards: TestClient) -> None:
    response = rewards.get("/api/v1/accounts/0.1001/rewards?timestamp=gte:0&order=asc&limit=2")
    assert stamps(response) == [T1, T2]
    assert (
        response.json()["links"]["next"] == f"/api/v1/accounts/0.1001/rewards?order=asc&limit=2&timestamp=gt:{T2}"
    )
    response = rewards.get(f"{BASE}?timestamp=gte:0&timestamp=lt:{T4}&limit=1")
    assert stamps(response) == [T3]
    assert response.json()["links"]["next"] == f"{BASE}?timestamp=gte:0&timestamp=lt:{T3}&limit=1"


def test_exactly_full_last_page_has_no_next_link(rewards: TestClient) -> None:
    response = rewards.get(f"{BASE}?limit=4")
    assert len(stamps(response)) == 4
    assert response.json()["links"]["next"] is None
    assert "link" not in response.headers


def test_equality_list_paginates_without_repeating_itself(rewards: TestClient) -> None:
    first = rewards.get(f"{BASE}?timestamp={T1}&timestamp={T3}&limit=1")
    assert stamps(first) == [T3]
    link = first.json()["links"]["next"]
    assert link == f"{BASE}?timestamp={T1}&timestamp={T3}&timestamp=lt:{T3}&limit=1"
    second = rewards.get(link)
    assert stamps(second) == [T1]
    assert second.json()["links"]["next"] is None


def test_reference_next_link_mode(rewards: TestClient, api_settings: Settings) -> None:
    reconfigure(rewards, dataclasses.replace(api_settings, pagination_probe=False))
    response = rewards.get(f"{BASE}?limit=4")
    assert response.json()["links"]["next"] == f"{BASE}?limit=4&timestamp=lt:{T1}"
    # the bounds leave nothing after the last row: no link
    response = rewards.get(f"{BASE}?timestamp=gte:{T2}&order=asc&limit=1&timestamp=lte:{T2}")
    assert stamps(response) == [T2]
    assert response.json()["links"]["next"] is None


def test_limit_capped_and_default(rewards: TestClient, api_settings: Settings) -> None:
    reconfigure(rewards, dataclasses.replace(api_settings, limit_default=1, limit_max=2))
    assert stamps(rewards.get(BASE)) == [T4]
    response = rewards.get(f"{BASE}?limit=50&order=asc")
    assert stamps(response) == [T1, T2]
    assert response.json()["links"]["next"] == f"{BASE}?limit=50&order=asc&timestamp=gt:{T2}"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            f"timestamp=foo:{T1}&order=12&limit=a",
            ["Invalid parameter: timestamp", "Invalid parameter: order", "Invalid parameter: limit"],
        ),
        (
            "timestamp=eq:abc.def&order=42&limit=-5",
            ["Invalid parameter: timestamp", "Invalid parameter: order", "Invalid parameter: limit"],
        ),
        (f"timestamp=ne:{T1}", ["Not equals (ne) operator is not supported for timestamp"]),
        (f"timestamp=gt:1&timestamp=ne:{T1}", ["Not equals (ne) operator is not supported for timestamp"]),
        (f"timestamp=ne:{T1}&limit=0", ["Invalid parameter: limit"]),
        ("timestamp=", ["Invalid parameter: timestamp"]),
        ("timestamp=1.", ["Invalid parameter: timestamp"]),
        ("timestamp=1.1234567890", ["Invalid parameter: timestamp"]),
        ("timestamp=-1", ["Invalid parameter: timestamp"]),
        ("timestamp=GT:1", ["Invalid parameter: timestamp"]),
        ("timestamp=gt:lt:1", ["Invalid parameter: timestamp"]),
        ("timestamp=99999999999999999999", ["Invalid parameter: timestamp"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=gt:5", ["Invalid parameter: limit"]),
        ("limit=99999999999999999999", ["Invalid parameter: limit"]),
        ("order=up", ["Invalid parameter: order"]),
        ("order=eq:desc", ["Invalid parameter: order"]),
        ("account.id=1001", ["Unknown query parameter: account.id"]),
        ("foo=1&limit=x", ["Invalid parameter: limit", "Unknown query parameter: foo"]),
        (
            "&".join(f"timestamp={n}" for n in range(1, 10)),
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
        (
            "&".join(f"timestamp={n}" for n in range(1, 6))
            + "&"
            + "&".join(f"TIMESTAMP={n}" for n in range(6, 10)),
            ["Parameter values count exceeds maximum number allowed: timestamp count: 9 max: 8"],
        ),
    ],
)
def test_bad_input(rewards: TestClient, query: str, expected: list[str]) -> None:
    response = rewards.get(f"{BASE}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers
