"""GET /api/v1/accounts/{id}/allowances/crypto against a real PostgreSQL: path forms, parameters, pagination,
and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"
EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead57"
SPENDER_EVM = "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"
BASE = "/api/v1/accounts/1001/allowances/crypto"
INT64_MAX = 9223372036854775807

SETUP: dict[str, Any] = {
    "accounts": [
        {"num": 1001, "alias": ALIAS, "evm_address": EVM},
        {"num": 2001},
        {"num": 3001, "evm_address": SPENDER_EVM},
        {"num": 4001},
        {"num": 5001},
    ],
    "cryptoAllowances": [
        {"amount": 0, "amount_granted": 50, "owner": 1001, "spender": 1998, "timestamp_range": "[9,)"},
        {
            "amount": 23,
            "amount_granted": 33,
            "owner": 1001,
            "spender": 2001,
            "timestamp_range": "[1234567890000000001,)",
        },
        {
            "amount": 34,
            "amount_granted": 44,
            "owner": 1001,
            "spender": 3001,
            "timestamp_range": "[1234567890000000002,)",
        },
        {
            "amount": 45,
            "amount_granted": 55,
            "owner": 2001,
            "spender": 3001,
            "timestamp_range": "[1234567890000000003,)",
        },
        {
            "amount": 56,
            "amount_granted": 66,
            "owner": 1001,
            "spender": 4001,
            "timestamp_range": "[1234567890000000004,)",
        },
        {
            "amount": INT64_MAX - 10,
            "amount_granted": INT64_MAX,
            "owner": 1001,
            "spender": 5001,
            "timestamp_range": "[1234567890000000005,)",
        },
    ],
}


@pytest.fixture
def allowances(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def spenders(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["spender"] for item in response.json()["allowances"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_encodings_and_default_order(allowances: TestClient) -> None:
    response = allowances.get(BASE)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["allowances"][0] == {
        "amount": INT64_MAX - 10,
        "amount_granted": INT64_MAX,
        "owner": "0.0.1001",
        "spender": "0.0.5001",
        "timestamp": {"from": "1234567890.000000005", "to": None},
    }
    assert list(body["allowances"][0]) == ["amount", "amount_granted", "owner", "spender", "timestamp"]
    assert b'"amount_granted":9223372036854775807' in response.content
    # descending by spender by default; the spent allowance (amount 0) and other owners' allowances are hidden
    assert spenders(response) == ["0.0.5001", "0.0.4001", "0.0.3001", "0.0.2001"]


@pytest.mark.parametrize(
    "owner",
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
def test_owner_path_forms(allowances: TestClient, owner: str) -> None:
    response = allowances.get(f"/api/v1/accounts/{owner}/allowances/crypto")
    assert spenders(response) == ["0.0.5001", "0.0.4001", "0.0.3001", "0.0.2001"]


def test_contract_owner(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "contracts": [{"num": 7001, "evm_address": SPENDER_EVM}],
            "cryptoAllowances": [{"amount": 5, "owner": 7001, "spender": 2001}],
        }
    )
    assert spenders(client.get(f"/api/v1/accounts/0x{SPENDER_EVM}/allowances/crypto")) == ["0.0.2001"]


@pytest.mark.parametrize("owner", ["0.0.9999", "9999", "0x00000000000000000000000000000000deadbeef"])
def test_unknown_numeric_owner_is_an_empty_list(allowances: TestClient, owner: str) -> None:
    response = allowances.get(f"/api/v1/accounts/{owner}/allowances/crypto")
    assert response.status_code == 200
    assert response.json() == {"allowances": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        ("AAAQEAYEAUDAOCAJBIFQYDIOB4", "No account with a matching alias found"),
        ("0.0.AAAQEAYEAUDAOCAJBIFQYDIOB4", "No account with a matching alias found"),
        ("0x" + EVM[:-1] + "0", "Not found"),
        (EVM[:-1] + "0", "Not found"),
    ],
)
def test_unknown_alias_or_evm_owner_is_404(allowances: TestClient, owner: str, message: str) -> None:
    response = allowances.get(f"/api/v1/accounts/{owner}/allowances/crypto?limit=bad")
    assert response.status_code == 404
    assert messages(response) == [message]
    assert "cache-control" not in response.headers


@pytest.mark.parametrize(
    "owner", ["0.0.8%00", "abc", "0.0.x", "1.2.3.4", "0.0.-1", "9.2." + EVM, "0.0.274877906944"]
)
def test_invalid_owner_is_400_before_query_errors(allowances: TestClient, owner: str) -> None:
    response = allowances.get(f"/api/v1/accounts/{owner}/allowances/crypto?limit=bad&foo=1")
    assert response.status_code == 400
    assert messages(response) == ["Invalid parameter: idOrAliasOrEvmAddress"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("spender.id=5001", ["0.0.5001"]),
        ("spender.id=0.5001", ["0.0.5001"]),
        ("spender.id=0.0.5001", ["0.0.5001"]),
        ("spender.id=eq:0.0.5001", ["0.0.5001"]),
        ("spender.id=0x0000000000000000000000000000000000001389", ["0.0.5001"]),
        ("spender.id=1998", []),
        ("spender.id=7000", []),
        ("spender.id=0.1.5001", []),
        ("spender.id=2001&spender.id=4001", ["0.0.4001", "0.0.2001"]),
        ("spender.id=2001&spender.id=4001&spender.id=gt:3000", ["0.0.4001"]),
        ("spender.id=gt:3001", ["0.0.5001", "0.0.4001"]),
        ("spender.id=gte:3001", ["0.0.5001", "0.0.4001", "0.0.3001"]),
        ("spender.id=lt:3001", ["0.0.2001"]),
        ("spender.id=lte:3001", ["0.0.3001", "0.0.2001"]),
        ("spender.id=gt:2000&spender.id=lt:5000", ["0.0.4001", "0.0.3001", "0.0.2001"]),
        ("spender.id=gt:4001&spender.id=lt:3001", []),
        (f"spender.id={SPENDER_EVM}", ["0.0.3001"]),
        (f"spender.id=0x{SPENDER_EVM}", ["0.0.3001"]),
        (f"spender.id=gt:0.0.{SPENDER_EVM}", ["0.0.5001", "0.0.4001"]),
        (f"spender.id=2001&spender.id={SPENDER_EVM}", ["0.0.3001", "0.0.2001"]),
        (f"spender.id=2001&spender.id={EVM[:-1]}0", ["0.0.2001"]),
        (f"spender.id={EVM[:-1]}0", []),
        (f"spender.id=lt:{EVM[:-1]}0", []),
        ("Spender.ID=5001", ["0.0.5001"]),
    ],
)
def test_spender_id(allowances: TestClient, query: str, expected: list[str]) -> None:
    assert spenders(allowances.get(f"{BASE}?{query}")) == expected


def test_order(allowances: TestClient) -> None:
    assert spenders(allowances.get(f"{BASE}?order=asc")) == ["0.0.2001", "0.0.3001", "0.0.4001", "0.0.5001"]
    assert spenders(allowances.get(f"{BASE}?order=ASC&order=desc")) == [
        "0.0.5001",
        "0.0.4001",
        "0.0.3001",
        "0.0.2001",
    ]


def test_pagination_follows_next_links_to_the_end(allowances: TestClient) -> None:
    for order, expected, links in [
        (
            "asc",
            ["0.0.2001", "0.0.3001", "0.0.4001", "0.0.5001"],
            [f"{BASE}?limit=2&order=asc&spender.id=gt:0.0.3001"],
        ),
        (
            "desc",
            ["0.0.5001", "0.0.4001", "0.0.3001", "0.0.2001"],
            [f"{BASE}?limit=2&order=desc&spender.id=lt:0.0.4001"],
        ),
    ]:
        seen: list[str] = []
        followed: list[str] = []
        url: str | None = f"{BASE}?limit=2&order={order}"
        while url:
            response = allowances.get(url)
            seen += spenders(response)
            url = response.json()["links"]["next"]
            if url:
                followed.append(url)
                assert response.headers["link"] == f'<{url}>; rel="next"'
        assert seen == expected
        assert followed == links


def test_next_link_keeps_the_other_bound(allowances: TestClient) -> None:
    response = allowances.get(f"{BASE}?spender.id=gt:2000&spender.id=lt:6000&order=asc&limit=2")
    assert spenders(response) == ["0.0.2001", "0.0.3001"]
    assert response.json()["links"]["next"] == (
        f"{BASE}?spender.id=lt:6000&spender.id=gt:0.0.3001&order=asc&limit=2"
    )


def test_next_link_keeps_the_path_as_sent(allowances: TestClient) -> None:
    response = allowances.get(f"/api/v1/accounts/0.0.{ALIAS}/allowances/crypto/?limit=3")
    assert (
        response.json()["links"]["next"]
        == f"/api/v1/accounts/0.0.{ALIAS}/allowances/crypto?limit=3&spender.id=lt:0.0.3001"
    )


def test_exactly_full_last_page_has_no_next_link(allowances: TestClient) -> None:
    response = allowances.get(f"{BASE}?limit=4")
    assert len(spenders(response)) == 4
    assert response.json()["links"]["next"] is None
    assert "link" not in response.headers


def test_equality_list_paginates_without_repeating_itself(allowances: TestClient) -> None:
    first = allowances.get(f"{BASE}?spender.id=2001&spender.id=4001&limit=1&order=asc")
    assert spenders(first) == ["0.0.2001"]
    link = first.json()["links"]["next"]
    assert link == f"{BASE}?spender.id=2001&spender.id=4001&spender.id=gt:0.0.2001&limit=1&order=asc"
    second = allowances.get(link)
    assert spenders(second) == ["0.0.4001"]
    assert second.json()["links"]["next"] is None


def test_reference_next_link_mode(allowances: TestClient, api_settings: Settings) -> None:
    reconfigure(allowances, dataclasses.replace(api_settings, pagination_probe=False))
    response = allowances.get(f"{BASE}?limit=4&order=asc")
    assert response.json()["links"]["next"] == f"{BASE}?limit=4&order=asc&spender.id=gt:0.0.5001"
    response = allowances.get(f"{BASE}?spender.id=5001&limit=1&order=asc")
    assert response.json()["links"]["next"] == f"{BASE}?spender.id=5001&spender.id=gt:0.0.5001&limit=1&order=asc"
    assert spenders(allowances.get(response.json()["links"]["next"])) == []
    # a page whose bounds leave nothing further gets no link
    response = allowances.get(f"{BASE}?spender.id=lte:0.0.3001&limit=2&order=asc")
    assert response.json()["links"]["next"] is None


def test_limit_capped_and_default(allowances: TestClient, api_settings: Settings) -> None:
    reconfigure(allowances, dataclasses.replace(api_settings, limit_default=2, limit_max=3))
    assert spenders(allowances.get(BASE)) == ["0.0.5001", "0.0.4001"]
    response = allowances.get(f"{BASE}?limit=5&order=asc")
    assert spenders(response) == ["0.0.2001", "0.0.3001", "0.0.4001"]
    assert response.json()["links"]["next"] == f"{BASE}?limit=5&order=asc&spender.id=gt:0.0.4001"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "spender.id=a&limit=b&order=c",
            ["Invalid parameter: spender.id", "Invalid parameter: limit", "Invalid parameter: order"],
        ),
        ("spender.id=ne:5001", ["Not equal (ne) comparison operator is not supported for spender.id"]),
        (
            "spender.id=gt:1&spender.id=ne:5001",
            ["Not equal (ne) comparison operator is not supported for spender.id"],
        ),
        ("spender.id=ne:5001&limit=0", ["Invalid parameter: limit"]),
        ("spender.id=ne:5001&foo=1", ["Unknown query parameter: foo"]),
        ("spender.id=", ["Invalid parameter: spender.id"]),
        ("spender.id=GT:5", ["Invalid parameter: spender.id"]),
        ("spender.id=gt:lt:5", ["Invalid parameter: spender.id"]),
        ("spender.id=1.2.3.4", ["Invalid parameter: spender.id"]),
        ("spender.id=0.0.-1", ["Invalid parameter: spender.id"]),
        ("spender.id=274877906944", ['Invalid entity ID "274877906944"']),
        ("spender.id=9.9." + EVM, ["Invalid parameter: spender.id"]),
        ("spender.id=" + EVM + "00", ["Invalid parameter: spender.id"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("limit=gt:5", ["Invalid parameter: limit"]),
        ("limit=99999999999999999999", ["Invalid parameter: limit"]),
        ("order=up", ["Invalid parameter: order"]),
        ("order=eq:asc", ["Invalid parameter: order"]),
        ("timestamp=1", ["Unknown query parameter: timestamp"]),
        ("token.id=1&limit=x", ["Invalid parameter: limit", "Unknown query parameter: token.id"]),
        (
            "&".join(f"spender.id={n}" for n in range(1, 10)),
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
        (
            "&".join(f"spender.id={n}" for n in range(1, 6))
            + "&"
            + "&".join(f"Spender.id={n}" for n in range(6, 10)),
            ["Parameter values count exceeds maximum number allowed: spender.id count: 9 max: 8"],
        ),
    ],
)
def test_bad_input(allowances: TestClient, query: str, expected: list[str]) -> None:
    response = allowances.get(f"{BASE}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers
