"""GET /api/v1/tokens against a real PostgreSQL: every parameter, pagination, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

KEY_A = "7a3c7a3c5477bdf4a63742647d7cfc4544acc1899d07141caf4cd9fea2f75b28"
KEY_B = "2b60955bcbf0cf5e9ea880b52e5b63f664b08edf6ed15e301049517438d61864"

SETUP: dict[str, Any] = {
    "entities": [
        {"num": 1001, "type": "TOKEN", "public_key": KEY_A, "key": "1220" + KEY_A},
        {"num": 1002, "type": "TOKEN", "public_key": KEY_B, "key": "1220" + KEY_B},
        {"num": 1003, "type": "TOKEN", "public_key": KEY_B, "key": [1, 1, 1]},
        {"num": 1004, "type": "TOKEN", "public_key": None, "key": None},
        {"num": 1005, "type": "TOKEN", "public_key": KEY_A, "key": "1220" + KEY_A},
        {"num": 4000, "type": "ACCOUNT", "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"},
    ],
    "tokens": [
        {
            "token_id": "0.0.1001",
            "name": "Coffee Points",
            "symbol": "CUP",
            "decimals": 2,
            "type": "FUNGIBLE_COMMON",
            "metadata": "cafe",
            "created_timestamp": 1,
        },
        {
            "token_id": "0.0.1002",
            "name": "Art 100% Club",
            "symbol": "ART",
            "type": "NON_FUNGIBLE_UNIQUE",
            "created_timestamp": 2,
        },
        {
            "token_id": "0.0.1003",
            "name": "coffee_beans ℏ",
            "symbol": "BEAN",
            "decimals": 8,
            "type": "FUNGIBLE_COMMON",
            "created_timestamp": 3,
        },
        {
            "token_id": "0.0.1004",
            "name": "Tickets",
            "symbol": "TIX",
            "type": "NON_FUNGIBLE_UNIQUE",
            "created_timestamp": 4,
        },
        {
            "token_id": "0.0.1005",
            "name": "Gold",
            "symbol": "AU",
            "decimals": 0,
            "type": "FUNGIBLE_COMMON",
            "created_timestamp": 5,
        },
    ],
    "tokenaccounts": [
        {"account_id": "0.0.4000", "token_id": "0.0.1001", "associated": True},
        {"account_id": "0.0.4000", "token_id": "0.0.1003", "associated": False},
        {"account_id": "0.0.4000", "token_id": "0.0.1005", "associated": True},
    ],
}


@pytest.fixture
def tokens(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [token["token_id"] for token in response.json()["tokens"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_list_shape_and_encodings(tokens: TestClient) -> None:
    response = tokens.get("/api/v1/tokens")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=10"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["tokens"][0] == {
        "admin_key": {"_type": "ED25519", "key": KEY_A},
        "metadata": "yv4=",
        "name": "Coffee Points",
        "symbol": "CUP",
        "token_id": "0.0.1001",
        "type": "FUNGIBLE_COMMON",
        "decimals": 2,
    }
    assert body["tokens"][2]["admin_key"] == {"_type": "ProtobufEncoded", "key": "010101"}
    assert body["tokens"][3]["admin_key"] is None
    assert body["tokens"][3]["metadata"] == ""
    assert body["tokens"][1]["decimals"] == 0  # NFTs have no decimals
    assert list(body["tokens"][0]) == [
        "admin_key",
        "metadata",
        "name",
        "symbol",
        "token_id",
        "type",
        "decimals",
    ]


def test_empty_table(client: TestClient) -> None:
    assert client.get("/api/v1/tokens").json() == {"tokens": [], "links": {"next": None}}


def test_order_desc(tokens: TestClient) -> None:
    assert ids(tokens.get("/api/v1/tokens?order=desc")) == [
        "0.0.1005",
        "0.0.1004",
        "0.0.1003",
        "0.0.1002",
        "0.0.1001",
    ]
    assert ids(tokens.get("/api/v1/tokens?order=DESC")) == ids(tokens.get("/api/v1/tokens?order=desc"))


@pytest.mark.parametrize("written", ["DESC", "Desc", "desc"])
def test_next_link_writes_order_in_lower_case(tokens: TestClient, written: str) -> None:
    """The reference writes ``order`` in its own (lower-case) form in next links, whatever the caller's case."""
    link = tokens.get(f"/api/v1/tokens?order={written}&limit=2").json()["links"]["next"]
    assert link == "/api/v1/tokens?order=desc&limit=2&token.id=lt:0.0.1004"
    asc = tokens.get("/api/v1/tokens?limit=2&order=ASC").json()["links"]["next"]
    assert asc == "/api/v1/tokens?limit=2&order=asc&token.id=gt:0.0.1002"


def test_pagination_follows_next_links_to_the_end(tokens: TestClient) -> None:
    seen: list[str] = []
    url: str | None = "/api/v1/tokens?limit=2"
    links: list[str] = []
    while url:
        response = tokens.get(url)
        seen += ids(response)
        url = response.json()["links"]["next"]
        if url:
            links.append(url)
            assert response.headers["link"] == f'<{url}>; rel="next"'
    assert seen == ["0.0.1001", "0.0.1002", "0.0.1003", "0.0.1004", "0.0.1005"]
    assert links == [
        "/api/v1/tokens?limit=2&token.id=gt:0.0.1002",
        "/api/v1/tokens?limit=2&token.id=gt:0.0.1004",
    ]


def test_exactly_full_last_page_has_no_next_link(tokens: TestClient) -> None:
    response = tokens.get("/api/v1/tokens?limit=5")
    assert len(ids(response)) == 5
    assert response.json()["links"]["next"] is None
    assert "link" not in response.headers


def test_next_link_desc_keeps_lower_bound(tokens: TestClient) -> None:
    response = tokens.get("/api/v1/tokens?token.id=gte:0.0.1002&token.id=lt:0.0.1005&limit=2&order=desc")
    assert ids(response) == ["0.0.1004", "0.0.1003"]
    assert response.json()["links"]["next"] == (
        "/api/v1/tokens?token.id=gte:0.0.1002&token.id=lt:0.0.1003&limit=2&order=desc"
    )


def test_reference_next_link_mode(tokens: TestClient, api_settings: Settings) -> None:
    reconfigure(tokens, dataclasses.replace(api_settings, pagination_probe=False))
    response = tokens.get("/api/v1/tokens?limit=5")
    assert response.json()["links"]["next"] == "/api/v1/tokens?limit=5&token.id=gt:0.0.1005"


def test_limit_above_max_is_capped_and_link_keeps_it(tokens: TestClient, api_settings: Settings) -> None:
    reconfigure(tokens, dataclasses.replace(api_settings, limit_max=2))
    response = tokens.get("/api/v1/tokens?limit=10")
    assert ids(response) == ["0.0.1001", "0.0.1002"]
    assert response.json()["links"]["next"] == "/api/v1/tokens?limit=10&token.id=gt:0.0.1002"


def test_default_limit(tokens: TestClient, api_settings: Settings) -> None:
    reconfigure(tokens, dataclasses.replace(api_settings, limit_default=3))
    assert len(ids(tokens.get("/api/v1/tokens"))) == 3


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("token.id=0.0.1002", ["0.0.1002"]),
        ("token.id=0.1002", ["0.0.1002"]),
        ("token.id=1002", ["0.0.1002"]),
        ("token.id=eq:1002", ["0.0.1002"]),
        ("token.id=00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("token.id=0x00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("token.id=0.0.00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("token.id=gt:0.0.1003", ["0.0.1004", "0.0.1005"]),
        ("token.id=gte:0.0.1003&token.id=lt:1005", ["0.0.1003", "0.0.1004"]),
        ("token.id=lte:1002", ["0.0.1001", "0.0.1002"]),
        ("token.id=ne:1002&token.id=lt:1004", ["0.0.1001", "0.0.1003"]),
        ("token.id=1001&token.id=1004&token.id=0.7.1003", ["0.0.1001", "0.0.1004"]),
        ("token.id=1001&token.id=1004&token.id=gt:1001", ["0.0.1004"]),
        ("token.id=0.1.1002", []),
    ],
)
def test_token_id(tokens: TestClient, query: str, expected: list[str]) -> None:
    assert ids(tokens.get(f"/api/v1/tokens?{query}")) == expected


def test_equality_list_paginates_without_repeating_itself(tokens: TestClient) -> None:
    first = tokens.get("/api/v1/tokens?token.id=1001&token.id=1004&limit=1")
    assert ids(first) == ["0.0.1001"]
    link = first.json()["links"]["next"]
    assert link == "/api/v1/tokens?token.id=1001&token.id=1004&token.id=gt:0.0.1001&limit=1"
    assert ids(tokens.get(link)) == ["0.0.1004"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("type=ALL", ["0.0.1001", "0.0.1002", "0.0.1003", "0.0.1004", "0.0.1005"]),
        ("type=all", ["0.0.1001", "0.0.1002", "0.0.1003", "0.0.1004", "0.0.1005"]),
        ("type=FUNGIBLE_COMMON", ["0.0.1001", "0.0.1003", "0.0.1005"]),
        ("type=fungible_common", ["0.0.1001", "0.0.1003", "0.0.1005"]),
        ("type=non_fungible_unique", ["0.0.1002", "0.0.1004"]),
        ("type=ne:NON_FUNGIBLE_UNIQUE", ["0.0.1001", "0.0.1003", "0.0.1005"]),
        ("type=FUNGIBLE_COMMON&type=NON_FUNGIBLE_UNIQUE", []),
    ],
)
def test_type(tokens: TestClient, query: str, expected: list[str]) -> None:
    assert ids(tokens.get(f"/api/v1/tokens?{query}")) == expected


@pytest.mark.parametrize(
    "value",
    [KEY_B, "0x" + KEY_B, KEY_B.upper(), "302a300506032b6570032100" + KEY_B, "eq:" + KEY_B],
)
def test_publickey_forms(tokens: TestClient, value: str) -> None:
    assert ids(tokens.get(f"/api/v1/tokens?publickey={value}")) == ["0.0.1002", "0.0.1003"]


def test_publickey_repeated_is_and(tokens: TestClient) -> None:
    assert ids(tokens.get(f"/api/v1/tokens?publickey={KEY_A}&publickey={KEY_B}")) == []
    assert ids(tokens.get(f"/api/v1/tokens?publickey=ne:{KEY_A}")) == ["0.0.1002", "0.0.1003"]


@pytest.mark.parametrize(
    "value",
    [
        "0.0.4000",
        "0.4000",
        "4000",
        "0x0000000000000000000000000000000000000fa0",
        "0xac384c53f03855fa1b3616052f8ba32c6c2a2fec",
        "ac384c53f03855fa1b3616052f8ba32c6c2a2fec",
    ],
)
def test_account_id_lists_associated_tokens_only(tokens: TestClient, value: str) -> None:
    assert ids(tokens.get(f"/api/v1/tokens?account.id={value}")) == ["0.0.1001", "0.0.1005"]


def test_account_id_with_other_filters_and_link(tokens: TestClient) -> None:
    response = tokens.get("/api/v1/tokens?account.id=4000&limit=1&type=FUNGIBLE_COMMON")
    assert ids(response) == ["0.0.1001"]
    assert response.json()["links"]["next"] == (
        "/api/v1/tokens?account.id=4000&limit=1&type=FUNGIBLE_COMMON&token.id=gt:0.0.1001"
    )


@pytest.mark.parametrize("value", ["0.0.9999", "0x00000000000000000000000000000000deadbeef"])
def test_account_id_unknown_gives_empty_list(tokens: TestClient, value: str) -> None:
    assert tokens.get(f"/api/v1/tokens?account.id={value}").json() == {"tokens": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("name=coffee", ["0.0.1003", "0.0.1001"]),
        ("name=COFFEE", ["0.0.1003", "0.0.1001"]),
        ("name=eq:coffee", ["0.0.1003", "0.0.1001"]),
        ("name=%E2%84%8F", ["0.0.1003"]),
        ("name=coffee&name=bean", ["0.0.1003"]),
        ("name=100%25", ["0.0.1002"]),
        ("name=e_b", ["0.0.1003"]),
        ("name=e%25b", []),
        ("name=nothing here", []),
    ],
)
def test_name(tokens: TestClient, query: str, expected: list[str]) -> None:
    response = tokens.get(f"/api/v1/tokens?{query}&order=desc")
    assert ids(response) == expected
    assert response.json()["links"]["next"] is None


def test_name_is_never_paginated(tokens: TestClient) -> None:
    response = tokens.get("/api/v1/tokens?name=coffee&limit=1")
    assert ids(response) == ["0.0.1001"]
    assert response.json()["links"]["next"] is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=0", ["Invalid parameter: limit"]),
        ("name=cof%00fee", ["Invalid parameter: name"]),
        ("token.id=0.0.1%00", ["Invalid parameter: token.id"]),
        ("publickey=%00", ["Invalid parameter: publickey"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("limit=abc", ["Invalid parameter: limit"]),
        ("limit=", ["Invalid parameter: limit"]),
        ("limit=gt:5", ["Invalid parameter: limit"]),
        ("limit=99999999999999999999", ["Invalid parameter: limit"]),
        ("order=up", ["Invalid parameter: order"]),
        ("order=eq:asc", ["Invalid parameter: order"]),
        ("token.id=abc", ["Invalid parameter: token.id"]),
        ("token.id=GT:5", ["Invalid parameter: token.id"]),
        ("token.id=foo:5", ["Invalid parameter: token.id"]),
        ("token.id=gt:lt:5", ["Invalid parameter: token.id"]),
        ("token.id=0.0.0x00000000000000000000000000000000000003ea", ["Invalid parameter: token.id"]),
        ("token.id=06bd279138d5918402fc8ad500526cb2ee0eb985", ["Invalid parameter: token.id"]),
        ("token.id=1.2.3.4", ["Invalid parameter: token.id"]),
        ("token.id=1024.0.1", ['Invalid entity ID "1024.0.1"']),
        ("token.id=274877906944", ['Invalid entity ID "274877906944"']),
        ("account.id=gt:5", ["Invalid parameter: account.id"]),
        ("account.id=eq:5", ["Invalid parameter: account.id"]),
        ("account.id=5&account.id=6", ["Invalid parameter: account.id"]),
        ("publickey=-2", ["Invalid parameter: publickey"]),
        ("publickey=abcd", ["Invalid parameter: publickey"]),
        ("type=COIN", ["Invalid parameter: type"]),
        ("name=ab", ["Invalid parameter: name"]),
        ("name=" + "x" * 101, ["Invalid parameter: name"]),
        ("name=%E2%84%8F%E2%84%8F" + "x" * 95, ["Invalid parameter: name"]),
        ("name=ne:bar", ["Invalid parameter: name"]),
        ("timestamp=1", ["Unknown query parameter: timestamp"]),
        (
            "token.id=1&token.id=2&token.id=3&token.id=4&token.id=5&token.id=6&token.id=7&token.id=8&token.id=9",
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
        (
            "token.id=1&token.id=2&token.id=3&token.id=4&token.id=5&Token.id=6&token.id=7&token.id=8&token.id=9",
            ["Parameter values count exceeds maximum number allowed: token.id count: 9 max: 8"],
        ),
        (
            "token.id=1&name=coffee",
            ["token.id and name can not be used together. Use a more specific name instead."],
        ),
        ("account.id=1&name=coffee", ["account.id and name cannot be used together"]),
        (
            "account.id=lte:0.1.2.3&token.id=abc&limit=-2&publickey=-2&order=any&block.number=3",
            [
                "Invalid parameter: account.id",
                "Invalid parameter: token.id",
                "Invalid parameter: limit",
                "Invalid parameter: publickey",
                "Invalid parameter: order",
                "Unknown query parameter: block.number",
            ],
        ),
        (
            "block.number=3&foo=1&LIMIT=0",
            [
                "Invalid parameter: limit",
                "Unknown query parameter: block.number",
                "Unknown query parameter: foo",
            ],
        ),
    ],
)
def test_bad_input(tokens: TestClient, query: str, expected: list[str]) -> None:
    response = tokens.get(f"/api/v1/tokens?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_parameter_names_are_case_insensitive(tokens: TestClient) -> None:
    assert ids(tokens.get("/api/v1/tokens?Token.ID=1002")) == ["0.0.1002"]


def test_deleted_tokens_are_listed_and_tokens_without_entity_are_not(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "entities": [{"num": 7, "type": "TOKEN", "deleted": True}],
            "tokens": [{"token_id": "0.0.7"}, {"token_id": "0.0.8"}],
        }
    )
    assert ids(client.get("/api/v1/tokens")) == ["0.0.7"]
