"""GET /api/v1/accounts/{id}/allowances/nfts against a real PostgreSQL: owner and spender views, every
parameter, the (account, token) keyset, next links, and every bad input (the reference serves this route from
its Java service; we answer in our one error style)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"
EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead57"
BASE = "/api/v1/accounts/1001/allowances/nfts"

ROWS = [  # (owner, spender, token, approved_for_all)
    (1001, 2000, 10, True),
    (1001, 2000, 11, True),
    (1001, 2000, 12, False),
    (1001, 3000, 10, True),
    (1001, 3000, 15, True),
    (1001, 4000, 11, True),
    (1002, 3000, 10, True),
]
OWNED = [(spender, token) for owner, spender, token, approved in ROWS if owner == 1001 and approved]


@pytest.fixture
def allowances(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"accounts": [{"num": 1001, "alias": ALIAS, "evm_address": EVM}]})
    for index, (owner, spender, token, approved) in enumerate(ROWS):
        ledger.execute(
            "insert into nft_allowance (approved_for_all, owner, payer_account_id, spender, timestamp_range,"
            " token_id) values ($1, $2, $2, $3, int8range($4, null), $5)",
            approved,
            owner,
            spender,
            1234567890000000000 + index,
            token,
        )
    ledger.execute(
        "insert into nft_allowance_history (approved_for_all, owner, payer_account_id, spender, timestamp_range,"
        " token_id) values (true, 1001, 1001, 2000, '[1,2)', 99)"
    )
    return client


def pairs(response: Any, party: str = "spender") -> list[tuple[int, int]]:
    assert response.status_code == 200, response.text
    return [
        (int(item[party].split(".")[2]), int(item["token_id"].split(".")[2]))
        for item in response.json()["allowances"]
    ]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_and_headers(allowances: TestClient) -> None:
    response = allowances.get(BASE)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["allowances"][0] == {
        "approved_for_all": True,
        "owner": "0.0.1001",
        "spender": "0.0.2000",
        "timestamp": {"from": "1234567890.000000000", "to": None},
        "token_id": "0.0.10",
    }
    assert list(body["allowances"][0]) == ["approved_for_all", "owner", "spender", "timestamp", "token_id"]
    assert pairs(response) == OWNED


@pytest.mark.parametrize(
    "path",
    ["1001", "0.1001", "0.0.1001", "0x00000000000000000000000000000000000003e9", ALIAS, f"0.0.{ALIAS}", EVM],
)
def test_path_forms(allowances: TestClient, path: str) -> None:
    assert pairs(allowances.get(f"/api/v1/accounts/{path}/allowances/nfts")) == OWNED


def test_path_errors(allowances: TestClient) -> None:
    assert allowances.get("/api/v1/accounts/0.0.9/allowances/nfts").json() == {
        "allowances": [],
        "links": {"next": None},
    }
    response = allowances.get("/api/v1/accounts/0x" + "12" * 20 + "/allowances/nfts")
    assert (response.status_code, messages(response)) == (404, ["Not found"])
    response = allowances.get(f"/api/v1/accounts/{ALIAS[:-4]}AAAA/allowances/nfts")
    assert (response.status_code, messages(response)) == (404, ["No account with a matching alias found"])
    for path in ("abc", "a.b.c", "0.65537.1001", "0.0.-1001", "9223372036854775807", "0x" + "1" * 41):
        response = allowances.get(f"/api/v1/accounts/{path}/allowances/nfts")
        assert (response.status_code, messages(response)) == (400, ["Invalid parameter: idOrAliasOrEvmAddress"])


def test_the_query_is_validated_before_the_account_is_looked_up(allowances: TestClient) -> None:
    response = allowances.get("/api/v1/accounts/0x" + "12" * 20 + "/allowances/nfts?token.id=1")
    assert (response.status_code, messages(response)) == (400, ["token.id parameter must have account.id present"])


@pytest.mark.parametrize("value", ["false", "FALSE", "no", "off", "0"])
def test_owner_false_lists_allowances_granted_to_the_account(allowances: TestClient, value: str) -> None:
    response = allowances.get(f"/api/v1/accounts/3000/allowances/nfts?owner={value}")
    assert pairs(response, "owner") == [(1001, 10), (1001, 15), (1002, 10)]
    assert all(item["spender"] == "0.0.3000" for item in response.json()["allowances"])
    response = allowances.get(f"/api/v1/accounts/3000/allowances/nfts?owner={value}&account.id=gt:1001")
    assert pairs(response, "owner") == [(1002, 10)]


@pytest.mark.parametrize("value", ["true", "True", "yes", "on", "1"])
def test_owner_true(allowances: TestClient, value: str) -> None:
    assert pairs(allowances.get(f"{BASE}?owner={value}")) == OWNED


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("order=desc", OWNED[::-1]),
        ("order=DESC", OWNED[::-1]),
        ("account.id=2000", [(2000, 10), (2000, 11)]),
        ("account.id=eq:0.0.3000", [(3000, 10), (3000, 15)]),
        ("account.id=gt:2000", [(3000, 10), (3000, 15), (4000, 11)]),
        ("account.id=gte:2000&account.id=lt:4000", [(2000, 10), (2000, 11), (3000, 10), (3000, 15)]),
        ("account.id=gte:3000&account.id=lte:3000", [(3000, 10), (3000, 15)]),
        ("account.id=3000&token.id=15", [(3000, 15)]),
        ("account.id=3000&token.id=gt:10", [(3000, 15)]),
        ("account.id=gte:2000&token.id=gt:10", [(2000, 11), (3000, 10), (3000, 15), (4000, 11)]),
        ("account.id=lte:3000&token.id=lt:15", [(2000, 10), (2000, 11), (3000, 10)]),
        ("account.id=gte:2000&account.id=lte:3000&token.id=gt:10&token.id=lt:11", [(2000, 11), (3000, 10)]),
        ("account.id=gte:2000&account.id=lte:4000&token.id=11", [(2000, 11), (4000, 11)]),
        ("account.id=gte:3000&account.id=lte:3000&token.id=gt:10&token.id=lt:20", [(3000, 15)]),
        ("account.id=gte:2000&account.id=lte:4000&token.id=gt:11&token.id=lt:10", [(3000, 10), (3000, 15)]),
    ],
)
def test_filters(allowances: TestClient, query: str, expected: list[tuple[int, int]]) -> None:
    assert pairs(allowances.get(f"{BASE}?{query}")) == expected


def follow(client: TestClient, url: str, party: str = "spender") -> tuple[list[tuple[int, int]], list[str]]:
    seen: list[tuple[int, int]] = []
    links: list[str] = []
    next_url: str | None = url
    while next_url:
        response = client.get(next_url)
        seen += pairs(response, party)
        next_url = response.json()["links"]["next"]
        if next_url:
            assert response.headers["link"] == f'<{next_url}>; rel="next"'
            links.append(next_url)
        assert len(links) < 20
    return seen, links


@pytest.mark.parametrize(
    "query",
    [
        "",
        "order=desc",
        "account.id=2000",
        "account.id=gte:2000&token.id=gt:10",
        "account.id=gte:2000&token.id=gt:10&order=desc",
        "account.id=gte:2000&account.id=lte:4000&token.id=11",
        "account.id=gte:2000&account.id=lte:3000&token.id=gt:10&token.id=lt:20&order=desc",
    ],
)
@pytest.mark.parametrize("limit", [1, 2])
def test_following_next_links_gives_the_whole_answer(allowances: TestClient, query: str, limit: int) -> None:
    whole = pairs(allowances.get(f"{BASE}?{query}"))
    seen, _ = follow(allowances, f"{BASE}?{query}&limit={limit}")
    assert seen == whole


def test_next_links(allowances: TestClient) -> None:
    response = allowances.get(f"{BASE}?limit=1")
    assert response.json()["links"]["next"] == f"{BASE}?limit=1&account.id=gte:0.0.2000&token.id=gt:0.0.10"
    spender_view = "/api/v1/accounts/3000/allowances/nfts"
    response = allowances.get(f"{spender_view}?account.id=gte:1000&owner=false&token.id=gt:1&limit=1&order=asc")
    assert response.json()["links"]["next"] == (
        f"{spender_view}?owner=false&limit=1&order=asc&account.id=gte:0.0.1001&token.id=gt:0.0.10"
    )
    response = allowances.get(f"{BASE}?account.id=gte:1000&owner=true&token.id=gt:1&limit=2&order=desc")
    assert response.json()["links"]["next"] == (
        f"{BASE}?account.id=gte:1000&account.id=lte:0.0.3000&owner=true&token.id=gt:1&token.id=lt:0.0.15"
        "&limit=2&order=desc"
    )
    response = allowances.get(f"{BASE}?limit=1&account.id=gte:0.0.2000&token.id=0.0.11")
    assert response.json()["links"]["next"] == f"{BASE}?limit=1&token.id=0.0.11&account.id=gt:0.0.2000"
    assert allowances.get(f"{BASE}?account.id=2000&token.id=10&limit=1").json()["links"]["next"] is None


def test_reference_pagination_and_limits(allowances: TestClient, api_settings: Settings) -> None:
    reconfigure(allowances, dataclasses.replace(api_settings, pagination_probe=False))
    response = allowances.get(f"{BASE}?limit=5")
    assert response.json()["links"]["next"] == f"{BASE}?limit=5&account.id=gte:0.0.4000&token.id=gt:0.0.11"
    reconfigure(allowances, api_settings)
    assert len(pairs(allowances.get(f"{BASE}?limit=101"))) == 5  # capped, not rejected
    reconfigure(allowances, dataclasses.replace(api_settings, limit_default=2))
    assert pairs(allowances.get(BASE)) == OWNED[:2]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        ("account.id=gt:5&account.id=lt:6", ["Invalid range provided for account.id"]),
        ("account.id=5&account.id=lt:5", ["Invalid range provided for account.id"]),
        ("token.id=5", ["token.id parameter must have account.id present"]),
        ("account.id=ne:5", ["Unsupported range operator ne for account.id"]),
        ("account.id=5&token.id=ne:5", ["Unsupported range operator ne for token.id"]),
        (
            "account.id=5&account.id=6",
            ["Only one range operator from [eq] is allowed for the given parameter for account.id"],
        ),
        (
            "account.id=gt:5&account.id=gte:6",
            ["Only one range operator from [gt, gte] is allowed for the given parameter for account.id"],
        ),
        (
            "account.id=5&token.id=lt:5&token.id=lte:6",
            ["Only one range operator from [lt, lte] is allowed for the given parameter for token.id"],
        ),
        ("account.id=5&account.id=lte:6", ["Can't support both range and equal for account.id"]),
        ("account.id=gte:5&token.id=gt:9&token.id=lt:9", ["Invalid range provided for token.id"]),
        ("account.id=gte:5&token.id=lt:9", ["Requires the presence of an lte or eq account.id parameter"]),
        ("account.id=lt:5&token.id=lt:9", ["Requires the presence of an lte or eq account.id parameter"]),
        ("account.id=gt:5&token.id=gt:9", ["Requires the presence of an gte or eq account.id parameter"]),
        (
            "account.id=1&account.id=2&account.id=3",
            ["Parameter values count exceeds maximum number allowed: account.id count: 3 max: 2"],
        ),
        (
            "account.id=1&token.id=1&token.id=2&token.id=3",
            ["Parameter values count exceeds maximum number allowed: token.id count: 3 max: 2"],
        ),
        ("account.id=0x00000000000000000000000000000000000003e9", ["Invalid parameter: account.id"]),
        ("account.id=GT:1", ["Invalid parameter: account.id"]),
        ("token.id=abc", ["Invalid parameter: token.id"]),
        ("owner=maybe", ["Invalid parameter: owner"]),
        ("owner=", ["Invalid parameter: owner"]),
        ("owner=eq:true", ["Invalid parameter: owner"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=", ["Invalid parameter: limit"]),
        ("order=ascending", ["Invalid parameter: order"]),
        ("spender.id=1", ["Unknown query parameter: spender.id"]),
    ],
)
def test_bad_input(allowances: TestClient, query: str, expected: list[str]) -> None:
    response = allowances.get(f"{BASE}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_answers_match_the_reference_schema(allowances: TestClient) -> None:
    validator = reference_openapi.validator("/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/nfts")
    for url in (BASE, f"{BASE}?limit=2", "/api/v1/accounts/3000/allowances/nfts?owner=false"):
        errors = list(validator.iter_errors(allowances.get(url).json()))
        assert errors == [], [error.message for error in errors]
