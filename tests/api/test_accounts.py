"""GET /api/v1/accounts against a real PostgreSQL: every parameter, pagination, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi, support
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.settings import Settings

KEY_A = "7a3c7a3c5477bdf4a63742647d7cfc4544acc1899d07141caf4cd9fea2f75b28"
KEY_B = "2b60955bcbf0cf5e9ea880b52e5b63f664b08edf6ed15e301049517438d61864"
ECDSA = "023673dc1b97f1e2a99041867be087ec040374636b8e7486789112e95f09018401"
EVM = "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"
SYNTHETIC = "Mirror node created synthetic treasury account"

SETUP: dict[str, Any] = {
    "accounts": [
        {
            "num": 1001,
            "balance": 100,
            "balance_timestamp": "2000",
            "created_timestamp": "9999123456789",
            "auto_renew_period": 8000001,
            "public_key": KEY_A,
            "key": "1220" + KEY_A,
            "staked_node_id": 3,
            "stake_period_start": 1000,
        },
        {
            "num": 1002,
            "balance": 200,
            "balance_timestamp": "2001",
            "public_key": KEY_B,
            "key": "3a21" + ECDSA,
            "alias": "AEBAGBAFAYDQQCIQCEJBGFAVCYLRQGJA",
            "staked_account_id": 1001,
            "stake_period_start": 1000,
            "decline_reward": True,
        },
        {
            "num": 1003,
            "balance": 9223372036854775807,
            "expiration_timestamp": "9223372036854775807",
            "public_key": KEY_B,
            "evm_address": EVM,
            "ethereum_nonce": 9007199254740993,
            "staked_node_id": 4,
            "stake_period_start": 2000,
        },
        {"num": 1004, "key": [1, 1, 1], "public_key": None, "deleted": True},
        {"num": 2, "balance": 5, "memo": SYNTHETIC},
        {"num": 1006, "realm": 1, "balance": 600},
    ],
    "contracts": [{"num": 1005, "balance": 50, "evm_address": "ebb9a1be370150759408cd7af48e9eda2b8ead57"}],
    "entities": [{"num": 1007, "type": "TOKEN"}, {"num": 1008, "type": "TOPIC"}],
    "entityStakes": [
        {"id": 1001, "end_stake_period": 1500, "pending_reward": 123},
        {"id": 1002, "end_stake_period": 1500, "pending_reward": 456},
        {"id": 1003, "end_stake_period": 1999, "pending_reward": 789},
    ],
    "tokenaccounts": [
        {"account_id": "0.0.1001", "token_id": "0.0.5001", "balance": 11},
        {"account_id": "0.0.1001", "token_id": "0.0.5002", "balance": 12},
        {"account_id": "0.0.1001", "token_id": "0.0.5003", "balance": 13, "associated": False},
        {"account_id": "0.0.1001", "token_id": "0.0.5004", "balance": 9223372036854775807},
        {"account_id": "0.0.1002", "token_id": "0.0.5001", "balance": 21},
    ],
}
ALL = ["0.0.1001", "0.0.1002", "0.0.1003", "0.0.1004", "0.0.1005", "0.1.1006"]


@pytest.fixture
def accounts(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def reconfigure(client: TestClient, settings: Settings, **changes: Any) -> None:
    support.reconfigure(client, dataclasses.replace(settings, **changes))


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [account["account"] for account in response.json()["accounts"]]


def by_id(response: Any) -> dict[str, dict[str, Any]]:
    assert response.status_code == 200, response.text
    return {account["account"]: account for account in response.json()["accounts"]}


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_list_shape_and_encodings(accounts: TestClient) -> None:
    response = accounts.get("/api/v1/accounts")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=10"
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert body["links"] == {"next": None}
    assert [account["account"] for account in body["accounts"]] == ALL
    first = body["accounts"][0]
    assert first == {
        "account": "0.0.1001",
        "alias": None,
        "auto_renew_period": 8000001,
        "balance": {
            "balance": 100,
            "timestamp": "0.000002000",
            "tokens": [
                {"token_id": "0.0.5001", "balance": 11},
                {"token_id": "0.0.5002", "balance": 12},
                {"token_id": "0.0.5004", "balance": 9223372036854775807},
            ],
        },
        "created_timestamp": "9999.123456789",
        "decline_reward": False,
        "delegation_address": "0x",
        "deleted": False,
        "ethereum_nonce": None,
        "evm_address": "0x00000000000000000000000000000000000003e9",
        "expiry_timestamp": "8010000.123456789",
        "key": {"_type": "ED25519", "key": KEY_A},
        "max_automatic_token_associations": 0,
        "memo": "entity memo",
        "pending_reward": 123,
        "receiver_sig_required": False,
        "staked_account_id": None,
        "staked_node_id": 3,
        "stake_period_start": "86400000.000000000",
    }
    assert list(first) == list(first)  # key order is checked below on the raw text
    assert response.text.index('"account"') < response.text.index('"alias"') < response.text.index('"balance"')


def test_derived_fields(accounts: TestClient) -> None:
    found = by_id(accounts.get("/api/v1/accounts"))
    declined = found["0.0.1002"]
    assert declined["alias"] == "AEBAGBAFAYDQQCIQCEJBGFAVCYLRQGJA"
    assert declined["evm_address"] == "0x0102030405060708091011121314151617181920"  # a 20-byte alias
    assert declined["key"] == {"_type": "ECDSA_SECP256K1", "key": ECDSA}
    assert declined["pending_reward"] == 0  # declines rewards
    assert declined["staked_account_id"] == "0.0.1001"
    assert declined["staked_node_id"] is None
    assert declined["stake_period_start"] is None  # not staked to a node
    big = found["0.0.1003"]
    assert big["balance"]["balance"] == 9223372036854775807
    assert big["balance"]["timestamp"] is None
    assert big["evm_address"] == "0x" + EVM
    assert big["ethereum_nonce"] == 9007199254740993
    assert big["expiry_timestamp"] == "9223372036.854775807"
    assert big["deleted"] is False
    assert big["pending_reward"] == 0  # the period started after the staking record's last one
    assert big["stake_period_start"] == "172800000.000000000"
    plain = found["0.0.1004"]
    assert plain["key"] == {"_type": "ProtobufEncoded", "key": "010101"}
    assert plain["pending_reward"] == 0  # no staking record
    assert plain["deleted"] is True
    assert plain["balance"] == {"balance": None, "timestamp": None, "tokens": []}
    contract = found["0.0.1005"]
    assert contract["memo"] == "contract memo"
    assert contract["receiver_sig_required"] is None
    assert found["0.1.1006"]["evm_address"] == "0x00000000000000000000000000000000000003ee"  # num only
    assert plain["delegation_address"] == "0x"  # included by default, "0x" when unset


def test_delegation_address_can_be_left_out(accounts: TestClient, api_settings: Settings) -> None:
    reconfigure(accounts, api_settings, enable_delegation_address=False)
    plain = {account["account"]: account for account in accounts.get("/api/v1/accounts").json()["accounts"]}
    assert all("delegation_address" not in account for account in plain.values())
    assert "delegation_address" not in accounts.get("/api/v1/accounts/0.0.1004").json()


def test_delegation_address_in_the_document(api_settings: Settings) -> None:
    """Required by default (as in the reference's OpenAPI); neither listed nor required when left out."""

    def account_schema(settings: Settings) -> dict[str, Any]:
        document = create_app(settings, "postgresql://unused/db").state.openapi
        path = document["paths"]["/api/v1/accounts/{idOrAliasOrEvmAddress}"]["get"]
        schema: dict[str, Any] = path["responses"]["200"]["content"]["application/json"]["schema"]
        return schema

    assert "delegation_address" in account_schema(api_settings)["required"]
    left_out = account_schema(dataclasses.replace(api_settings, enable_delegation_address=False))
    assert "delegation_address" not in left_out["required"]
    assert "delegation_address" not in left_out["properties"]


def test_delegation_address_when_enabled(client: TestClient, ledger: Ledger, api_settings: Settings) -> None:
    ledger.load(
        {
            "accounts": [
                {"num": 1, "delegation_address": "0xdeadbeef00000000000000000000000000000001"},
                {"num": 2},
                {"num": 3, "delegation_address": "0000000000000000000000000000000000000000"},
            ]
        }
    )
    reconfigure(client, api_settings, enable_delegation_address=True)
    body = client.get("/api/v1/accounts").json()
    assert [account["delegation_address"] for account in body["accounts"]] == [
        "0xdeadbeef00000000000000000000000000000001",
        "0x",
        "0x",
    ]
    text = client.get("/api/v1/accounts?limit=1").text
    assert text.index('"decline_reward"') < text.index('"delegation_address"') < text.index('"deleted"')


def test_empty_table(client: TestClient) -> None:
    assert client.get("/api/v1/accounts").json() == {"accounts": [], "links": {"next": None}}


def test_order_desc_orders_token_balances_too(accounts: TestClient) -> None:
    response = accounts.get("/api/v1/accounts?order=desc")
    assert ids(response) == list(reversed(ALL))
    tokens = by_id(response)["0.0.1001"]["balance"]["tokens"]
    assert [token["token_id"] for token in tokens] == ["0.0.5004", "0.0.5002", "0.0.5001"]
    assert ids(accounts.get("/api/v1/accounts?order=DESC")) == list(reversed(ALL))


def test_repeated_order_last_wins(accounts: TestClient) -> None:
    assert ids(accounts.get("/api/v1/accounts?order=asc&order=desc")) == list(reversed(ALL))


def test_pagination_follows_next_links_to_the_end(accounts: TestClient) -> None:
    seen: list[str] = []
    links: list[str] = []
    url: str | None = "/api/v1/accounts?limit=2"
    while url:
        response = accounts.get(url)
        seen += ids(response)
        url = response.json()["links"]["next"]
        if url:
            links.append(url)
            assert response.headers["link"] == f'<{url}>; rel="next"'
    assert seen == ALL
    assert links == [
        "/api/v1/accounts?limit=2&account.id=gt:0.0.1002",
        "/api/v1/accounts?limit=2&account.id=gt:0.0.1004",
    ]


def test_next_links_keep_the_other_bound(accounts: TestClient) -> None:
    response = accounts.get("/api/v1/accounts?account.id=gte:0.0.1001&account.id=lt:0.0.1005&limit=2")
    assert ids(response) == ["0.0.1001", "0.0.1002"]
    assert response.json()["links"]["next"] == (
        "/api/v1/accounts?account.id=lt:0.0.1005&account.id=gt:0.0.1002&limit=2"
    )
    response = accounts.get("/api/v1/accounts?limit=2&order=desc&account.id=gt:0.0.1001")
    assert ids(response) == ["0.1.1006", "0.0.1005"]
    assert response.json()["links"]["next"] == (
        "/api/v1/accounts?limit=2&order=desc&account.id=gt:0.0.1001&account.id=lt:0.0.1005"
    )


def test_exactly_full_last_page_has_no_next_link(accounts: TestClient) -> None:
    response = accounts.get("/api/v1/accounts?limit=6")
    assert ids(response) == ALL
    assert response.json()["links"]["next"] is None
    assert "link" not in response.headers


def test_reference_next_link_mode(accounts: TestClient, api_settings: Settings) -> None:
    reconfigure(accounts, api_settings, pagination_probe=False)
    response = accounts.get("/api/v1/accounts?limit=6")
    assert response.json()["links"]["next"] == "/api/v1/accounts?limit=6&account.id=gt:0.1.1006"
    assert accounts.get("/api/v1/accounts?limit=7").json()["links"]["next"] is None


def test_limits_from_settings(accounts: TestClient, api_settings: Settings) -> None:
    reconfigure(accounts, api_settings, limit_default=3, limit_max=4, token_balance_limit_multiple_accounts=2)
    assert len(ids(accounts.get("/api/v1/accounts"))) == 3
    response = accounts.get("/api/v1/accounts?limit=10")
    assert len(ids(response)) == 4
    assert response.json()["links"]["next"] == "/api/v1/accounts?limit=10&account.id=gt:0.0.1004"
    tokens = by_id(response)["0.0.1001"]["balance"]["tokens"]
    assert [token["token_id"] for token in tokens] == ["0.0.5001", "0.0.5002"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("account.id=0.0.1002", ["0.0.1002"]),
        ("account.id=0.1002", ["0.0.1002"]),
        ("account.id=1002", ["0.0.1002"]),
        ("account.id=eq:1002", ["0.0.1002"]),
        ("account.id=0.1.1006", ["0.1.1006"]),
        ("account.id=1.1006", ["0.1.1006"]),
        ("account.id=0x00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("account.id=00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("account.id=0.0.00000000000000000000000000000000000003ea", ["0.0.1002"]),
        ("account.id=0x" + EVM, ["0.0.1003"]),
        ("account.id=" + EVM, ["0.0.1003"]),
        ("account.id=gte:0x" + EVM, ["0.0.1003", "0.0.1004", "0.0.1005", "0.1.1006"]),
        ("account.id=ne:0x" + EVM + "&account.id=lt:1005", ["0.0.1001", "0.0.1002", "0.0.1004"]),
        ("account.id=0xff000000000000000000000000000000deadbeef", []),
        ("account.id=gt:0xff000000000000000000000000000000deadbeef", []),
        ("account.id=ne:0xff000000000000000000000000000000deadbeef&account.id=lte:1002", ["0.0.1001", "0.0.1002"]),
        ("account.id=0xff000000000000000000000000000000deadbeef&account.id=1004", ["0.0.1004"]),
        ("account.id=1001&account.id=1004&account.id=1004", ["0.0.1001", "0.0.1004"]),
        ("account.id=1001&account.id=1004&account.id=gt:1001", ["0.0.1004"]),
        ("account.id=gt:1003", ["0.0.1004", "0.0.1005", "0.1.1006"]),
        ("account.id=gte:1003&account.id=lt:1005", ["0.0.1003", "0.0.1004"]),
        ("account.id=lte:1002", ["0.0.1001", "0.0.1002"]),
        ("account.id=ne:1002&account.id=lt:1004", ["0.0.1001", "0.0.1003"]),
        ("account.id=gt:1005&account.id=lt:1002", []),
        ("account.id=2", []),
        ("account.id=1007", []),
    ],
)
def test_account_id(accounts: TestClient, query: str, expected: list[str]) -> None:
    assert ids(accounts.get(f"/api/v1/accounts?{query}")) == expected


def test_equality_list_paginates_without_repeating_itself(accounts: TestClient) -> None:
    first = accounts.get("/api/v1/accounts?account.id=1001&account.id=1004&limit=1")
    assert ids(first) == ["0.0.1001"]
    link = first.json()["links"]["next"]
    assert link == "/api/v1/accounts?account.id=1001&account.id=1004&account.id=gt:0.0.1001&limit=1"
    assert ids(accounts.get(link)) == ["0.0.1004"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("account.balance=100", ["0.0.1001"]),
        ("account.balance=eq:100", ["0.0.1001"]),
        ("account.balance=gt:100", ["0.0.1002", "0.0.1003", "0.1.1006"]),
        ("account.balance=gte:100&account.balance=lt:600", ["0.0.1001", "0.0.1002"]),
        ("account.balance=lte:100", ["0.0.1001", "0.0.1005"]),
        ("account.balance=ne:100&account.balance=lt:300", ["0.0.1002", "0.0.1005"]),
        ("account.balance=9223372036854775807", ["0.0.1003"]),
        ("account.balance=0", []),
    ],
)
def test_account_balance(accounts: TestClient, query: str, expected: list[str]) -> None:
    assert ids(accounts.get(f"/api/v1/accounts?{query}")) == expected


@pytest.mark.parametrize(
    "value",
    [KEY_B, "0x" + KEY_B, KEY_B.upper(), "302a300506032b6570032100" + KEY_B, "eq:" + KEY_B],
)
def test_publickey_forms(accounts: TestClient, value: str) -> None:
    assert ids(accounts.get(f"/api/v1/accounts?account.publickey={value}")) == ["0.0.1002", "0.0.1003"]


def test_publickey_repeated_is_and_and_takes_operators(accounts: TestClient) -> None:
    assert ids(accounts.get(f"/api/v1/accounts?account.publickey={KEY_A}&account.publickey={KEY_B}")) == []
    assert ids(accounts.get(f"/api/v1/accounts?account.PublicKey=ne:{KEY_A}")) == [
        "0.0.1002",
        "0.0.1003",
        "0.1.1006",
    ]


def test_all_filters_together(accounts: TestClient) -> None:
    response = accounts.get(
        f"/api/v1/accounts?account.id=gte:1001&account.id=lt:1004&account.balance=gt:100"
        f"&account.publickey={KEY_B}&order=desc&balance=true"
    )
    assert ids(response) == ["0.0.1003", "0.0.1002"]


@pytest.mark.parametrize(
    "query", ["balance=false", "balance=FALSE", "balance=true&balance=false", "balance=eq:false"]
)
def test_balance_false_leaves_balances_out(accounts: TestClient, query: str) -> None:
    response = accounts.get(f"/api/v1/accounts?{query}")
    assert ids(response) == ALL
    assert all(account["balance"] is None for account in response.json()["accounts"])
    assert by_id(response)["0.0.1001"]["pending_reward"] == 123


def test_balance_false_keeps_the_other_filters(accounts: TestClient) -> None:
    assert ids(accounts.get("/api/v1/accounts?balance=false&account.balance=gt:150&account.id=lt:1006")) == [
        "0.0.1002",
        "0.0.1003",
    ]
    assert ids(accounts.get("/api/v1/accounts?balance=True&account.id=1002")) == ["0.0.1002"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("limit=", ["Invalid parameter: limit"]),
        ("limit=gt:5", ["Invalid parameter: limit"]),
        ("order=up", ["Invalid parameter: order"]),
        ("order=eq:desc", ["Invalid parameter: order"]),
        ("balance=1", ["Invalid parameter: balance"]),
        ("balance=gt:true", ["Invalid parameter: balance"]),
        ("account.id=abc", ["Invalid parameter: account.id"]),
        ("account.id=gt:lt:5", ["Invalid parameter: account.id"]),
        ("account.id=GT:5", ["Invalid parameter: account.id"]),
        ("account.id=9.2.0000000000000000000000000000000000000013", ["Invalid parameter: account.id"]),
        ("account.balance=gt:-2", ["Invalid parameter: account.balance"]),
        ("account.balance=9223372036854775808", ["Invalid parameter: account.balance"]),
        ("account.balance=12345678901234567890", ["Invalid parameter: account.balance"]),
        ("account.balance=1.5", ["Invalid parameter: account.balance"]),
        ("account.publickey=abcdef", ["Invalid parameter: account.publickey"]),
        ("timestamp=1", ["Unknown query parameter: timestamp"]),
        ("account.id=abc&account.id=def", ["Invalid parameter: account.id"]),
        (
            "account.id=1&account.id=2&account.id=3&account.id=4&account.id=5&account.id=6&account.id=7"
            "&account.id=8&account.id=9",
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
        (
            "account.id=1&account.id=2&account.id=3&account.id=4&account.id=5&Account.id=6&account.id=7"
            "&account.id=8&account.id=9&foo=1",
            [
                "Parameter values count exceeds maximum number allowed: account.id count: 9 max: 8",
                "Unknown query parameter: foo",
            ],
        ),
        (
            "account.id=lte:0.1.2.3&account.balance=gt:-2&account.publickey=abcdef&timestamp=-1.2&order=any"
            "&balance=1&token.id=0.0.45678",
            [
                "Invalid parameter: account.id",
                "Invalid parameter: account.balance",
                "Invalid parameter: account.publickey",
                "Unknown query parameter: timestamp",
                "Invalid parameter: order",
                "Invalid parameter: balance",
                "Unknown query parameter: token.id",
            ],
        ),
    ],
)
def test_bad_input(accounts: TestClient, query: str, expected: list[str]) -> None:
    response = accounts.get(f"/api/v1/accounts?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_parameter_names_are_case_insensitive(accounts: TestClient) -> None:
    assert ids(accounts.get("/api/v1/accounts?Account.ID=1002")) == ["0.0.1002"]


def test_shard_and_realm_ids(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "accounts": [
                {"num": 17, "realm": 1, "shard": 1023},
                {"num": 18, "realm": 1, "shard": 1023, "balance": 5},
                {"num": 19, "realm": 1, "shard": 1023},
            ],
            "tokenaccounts": [
                {"token_id": "1023.0.99998", "account_id": "1023.1.18", "balance": 1},
                {"token_id": "1023.0.99999", "account_id": "1023.1.18", "balance": 2},
            ],
        }
    )
    response = client.get("/api/v1/accounts?account.id=gte:1023.1.18&account.id=lt:1023.1.20&order=desc&limit=1")
    assert ids(response) == ["1023.1.19"]
    assert response.json()["links"]["next"] == (
        "/api/v1/accounts?account.id=gte:1023.1.18&account.id=lt:1023.1.19&order=desc&limit=1"
    )
    tokens = by_id(client.get("/api/v1/accounts?account.id=1023.1.18&order=desc"))["1023.1.18"]["balance"][
        "tokens"
    ]
    assert tokens == [{"token_id": "1023.0.99999", "balance": 2}, {"token_id": "1023.0.99998", "balance": 1}]
    assert by_id(response)["1023.1.19"]["evm_address"] == "0x0000000000000000000000000000000000000013"


def reference_errors(path: str, body: Any) -> list[str]:
    """Where ``body`` breaks the reference OpenAPI's 200 schema of ``path``, except for ``delegation_address``:
    the reference's document requires it (the service leaves it out by default) and does not allow ``"0x"``
    (which the service answers when there is none)."""
    return reference_openapi.schema_errors(
        path,
        body,
        ignore=lambda error: "delegation_address" in error.message or "delegation_address" in error.absolute_path,
    )


@pytest.mark.parametrize("query", ["", "?order=desc&limit=2", "?balance=false", "?account.id=1003"])
def test_answers_match_the_reference_schema(accounts: TestClient, api_settings: Settings, query: str) -> None:
    for delegation in (False, True):
        reconfigure(accounts, api_settings, enable_delegation_address=delegation)
        body = accounts.get(f"/api/v1/accounts{query}").json()
        assert reference_errors("/api/v1/accounts", body) == []
