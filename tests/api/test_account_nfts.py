"""GET /api/v1/accounts/{id}/nfts against a real PostgreSQL: path forms, every parameter, the
(token, serial number) keyset, next links, and every bad input."""

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
SPENDER_EVM = "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"
BASE = "/api/v1/accounts/0.0.1001/nfts"

OWNED = [  # (token, serial, spender) of account 1001
    (100, 1, None),
    (100, 2, 2000),
    (100, 3, None),
    (100, 4, 3000),
    (100, 5, None),
    (1500, 1, 2000),
    (1500, 2, None),
    (1500, 3, 2001),
    (2500, 1, None),
    (2500, 2, 2001),
    (3500, 1, None),
]
ALL_DESC = [(token, serial) for token, serial, _ in OWNED][::-1]

SETUP: dict[str, Any] = {
    "accounts": [{"num": 1001, "alias": ALIAS, "evm_address": EVM}, {"num": 2001, "evm_address": SPENDER_EVM}],
    "entities": [
        {"num": 100, "type": "TOKEN"},
        {"num": 1500, "type": "TOKEN"},
        {"num": 2500, "type": "TOKEN"},
        {"num": 3500, "type": "TOKEN", "deleted": True},
    ],
    "tokens": [{"token_id": f"0.0.{num}", "type": "NON_FUNGIBLE_UNIQUE"} for num in (100, 1500, 2500, 3500)],
    "nfts": [
        {
            "account_id": "0.0.1001",
            "created_timestamp": 1234567890000000000 + index,
            "serial_number": serial,
            "spender": None if spender is None else f"0.0.{spender}",
            "token_id": f"0.0.{token}",
            "metadata": f"m{index}",
            "deleted": (token, serial) == (2500, 1),
            "delegating_spender": "0.0.7" if (token, serial) == (1500, 1) else None,
        }
        for index, (token, serial, spender) in enumerate(OWNED)
    ]
    + [{"account_id": "0.0.2001", "created_timestamp": 5, "serial_number": 4, "token_id": "0.0.1500"}],
}


@pytest.fixture
def nfts(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def keys(response: Any) -> list[tuple[int, int]]:
    assert response.status_code == 200, response.text
    return [(int(item["token_id"].split(".")[2]), item["serial_number"]) for item in response.json()["nfts"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_headers_and_encodings(nfts: TestClient) -> None:
    response = nfts.get(BASE)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["links"] == {"next": None}
    assert keys(response) == ALL_DESC
    by_key = {(int(item["token_id"].split(".")[2]), item["serial_number"]): item for item in body["nfts"]}
    assert by_key[(1500, 1)] == {
        "account_id": "0.0.1001",
        "created_timestamp": "1234567890.000000005",
        "delegating_spender": "0.0.7",
        "deleted": False,
        "metadata": "bTU=",
        "modified_timestamp": "1234567890.000000005",
        "serial_number": 1,
        "spender": "0.0.2000",
        "token_id": "0.0.1500",
    }
    assert list(by_key[(1500, 1)]) == [
        "account_id",
        "created_timestamp",
        "delegating_spender",
        "deleted",
        "metadata",
        "modified_timestamp",
        "serial_number",
        "spender",
        "token_id",
    ]
    assert by_key[(2500, 1)]["deleted"] is True  # the NFT is deleted
    assert by_key[(3500, 1)]["deleted"] is True  # its token is deleted
    assert by_key[(100, 1)]["spender"] is None


def test_metadata_null_and_empty(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"nfts": [{"account_id": "0.0.9", "serial_number": 1, "token_id": "0.0.5"}]})
    ledger.execute(
        "insert into nft (account_id, serial_number, token_id, timestamp_range) values (9, 2, 5, '[1,)')"
    )
    items = client.get("/api/v1/accounts/9/nfts").json()["nfts"]
    assert [(item["serial_number"], item["metadata"], item["created_timestamp"]) for item in items] == [
        (2, None, None),
        (1, "", "0.000000000"),
    ]


@pytest.mark.parametrize(
    "path",
    [
        "1001",
        "0.1001",
        "0.0.1001",
        "0x00000000000000000000000000000000000003e9",
        ALIAS,
        f"0.0.{ALIAS}",
        EVM,
        f"0x{EVM}",
    ],
)
def test_path_forms(nfts: TestClient, path: str) -> None:
    assert keys(nfts.get(f"/api/v1/accounts/{path}/nfts")) == ALL_DESC


def test_path_errors(nfts: TestClient) -> None:
    assert nfts.get("/api/v1/accounts/0.0.3001/nfts").json() == {"nfts": [], "links": {"next": None}}
    response = nfts.get("/api/v1/accounts/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/nfts")
    assert (response.status_code, messages(response)) == (404, ["No account with a matching alias found"])
    response = nfts.get("/api/v1/accounts/0x" + "12" * 20 + "/nfts")
    assert (response.status_code, messages(response)) == (404, ["Not found"])
    for path in ("x", "0.x", "-1", "0.0.-1", "ABC1"):
        response = nfts.get(f"/api/v1/accounts/{path}/nfts")
        assert (response.status_code, messages(response)) == (400, ["Invalid parameter: idOrAliasOrEvmAddress"])


def test_order_asc(nfts: TestClient) -> None:
    assert keys(nfts.get(f"{BASE}?order=asc")) == ALL_DESC[::-1]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("token.id=1500", [(1500, 3), (1500, 2), (1500, 1)]),
        ("token.id=0x00000000000000000000000000000000000005dc", [(1500, 3), (1500, 2), (1500, 1)]),
        ("token.id=gte:2500", [(3500, 1), (2500, 2), (2500, 1)]),
        ("token.id=gt:100&token.id=lt:2500", [(1500, 3), (1500, 2), (1500, 1)]),
        ("token.id=1", []),
        ("token.id=1500&serialnumber=2", [(1500, 2)]),
        ("token.id=1500&serialnumber=gt:1", [(1500, 3), (1500, 2)]),
        ("token.id=1500&serialnumber=lte:2", [(1500, 2), (1500, 1)]),
        ("token.id=100&serialnumber=gt:1&serialnumber=lt:5", [(100, 4), (100, 3), (100, 2)]),
        # the (token, serial) tuple
        ("token.id=gte:1500&serialnumber=gte:2", [(3500, 1), (2500, 2), (2500, 1), (1500, 3), (1500, 2)]),
        ("token.id=lte:1500&serialnumber=lt:2", [(1500, 1), (100, 5), (100, 4), (100, 3), (100, 2), (100, 1)]),
        (
            "token.id=gte:100&token.id=lte:2500&serialnumber=gt:3&serialnumber=lt:2",
            [(2500, 1), (1500, 3), (1500, 2), (1500, 1), (100, 5), (100, 4)],
        ),
        ("token.id=gte:1500&token.id=lte:1500&serialnumber=gt:1&serialnumber=lt:3", [(1500, 2)]),
        # spender.id
        ("spender.id=2000", [(1500, 1), (100, 2)]),
        ("spender.id=2000&spender.id=3000", [(1500, 1), (100, 4), (100, 2)]),
        (f"spender.id={SPENDER_EVM}", [(2500, 2), (1500, 3)]),
        (f"spender.id=0x{SPENDER_EVM}&spender.id=0x" + "12" * 20, [(2500, 2), (1500, 3)]),
        ("spender.id=0x" + "12" * 20, []),
        ("spender.id=0x" + "12" * 20 + "&spender.id=gt:1", []),
        ("spender.id=gt:0x" + "12" * 20, []),
        ("spender.id=gt:2000", [(2500, 2), (1500, 3), (100, 4)]),
        ("spender.id=gte:2001&spender.id=lt:3000", [(2500, 2), (1500, 3)]),
        ("spender.id=lte:2000", [(1500, 1), (100, 2)]),
        ("spender.id=2000&spender.id=gt:1999&spender.id=lt:3001", [(1500, 1), (100, 2)]),
        ("token.id=1500&serialnumber=3&spender.id=2001", [(1500, 3)]),
        ("token.id=1500&serialnumber=3&spender.id=2000", []),
        ("token.id=lte:1500&serialnumber=lt:3&spender.id=gt:1999", [(1500, 1), (100, 4), (100, 2)]),
    ],
)
def test_filters(nfts: TestClient, query: str, expected: list[tuple[int, int]]) -> None:
    assert keys(nfts.get(f"{BASE}?{query}")) == expected


def follow(client: TestClient, url: str) -> tuple[list[tuple[int, int]], list[str]]:
    seen: list[tuple[int, int]] = []
    links: list[str] = []
    next_url: str | None = url
    while next_url:
        response = client.get(next_url)
        seen += keys(response)
        next_url = response.json()["links"]["next"]
        if next_url:
            links.append(next_url)
        assert len(links) < 20
    return seen, links


@pytest.mark.parametrize(
    "query",
    [
        "",
        "order=asc",
        "token.id=100",
        "token.id=100&order=asc",
        "token.id=100&serialnumber=gt:1",
        "token.id=gte:100&serialnumber=gte:2&order=asc",
        "token.id=lte:2500&serialnumber=lt:2",
        "token.id=gte:100&token.id=lte:2500&serialnumber=gt:3&serialnumber=lt:2",
        "token.id=gte:100&token.id=lte:2500&serialnumber=gt:3&serialnumber=lt:2&order=asc",
        "spender.id=2000&spender.id=3000",
        "spender.id=gte:2000&order=asc",
    ],
)
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_following_next_links_gives_the_whole_answer(nfts: TestClient, query: str, limit: int) -> None:
    whole = keys(nfts.get(f"{BASE}?{query}"))
    seen, _ = follow(nfts, f"{BASE}?{query}&limit={limit}")
    assert seen == whole


def test_next_links(nfts: TestClient) -> None:
    _, links = follow(nfts, f"{BASE}?spender.id=2000&spender.id=3000&limit=2")
    assert links == [f"{BASE}?spender.id=2000&spender.id=3000&limit=2&token.id=lte:0.0.100&serialnumber=lt:4"]
    _, links = follow(nfts, f"{BASE}?token.id=gte:1500&serialnumber=gte:2&order=asc&limit=2")
    assert links == [
        f"{BASE}?order=asc&limit=2&token.id=gte:0.0.1500&serialnumber=gt:3",
        f"{BASE}?order=asc&limit=2&token.id=gte:0.0.2500&serialnumber=gt:2",
    ]
    _, links = follow(nfts, f"{BASE}?token.id=100&limit=4")
    assert links == [f"{BASE}?token.id=100&limit=4&serialnumber=lt:2"]
    response = nfts.get(f"{BASE}?token.id=100&serialnumber=3&limit=1")
    assert response.json()["links"]["next"] is None


def test_reference_pagination_and_limits(nfts: TestClient, api_settings: Settings) -> None:
    reconfigure(nfts, dataclasses.replace(api_settings, pagination_probe=False))
    response = nfts.get(f"{BASE}?token.id=3500&limit=1")
    assert response.json()["links"]["next"] == f"{BASE}?token.id=3500&limit=1&serialnumber=lt:1"
    reconfigure(nfts, dataclasses.replace(api_settings, limit_max=2, limit_default=1))
    response = nfts.get(f"{BASE}?limit=5")
    assert keys(response) == ALL_DESC[:2]
    assert response.json()["links"]["next"] == f"{BASE}?limit=5&token.id=lte:0.0.2500&serialnumber=lt:2"
    assert keys(nfts.get(BASE)) == ALL_DESC[:1]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        (
            "token.id=x&serialnumber=y&spender.id=z&order=12&limit=a",
            [
                "Invalid parameter: token.id",
                "Invalid parameter: serialnumber",
                "Invalid parameter: spender.id",
                "Invalid parameter: order",
                "Invalid parameter: limit",
            ],
        ),
        ("serialnumber=0&token.id=1", ["Invalid parameter: serialnumber"]),
        ("serialnumber=-1&token.id=1", ["Invalid parameter: serialnumber"]),
        ("serialnumber=9223372036854775808&token.id=1", ["Invalid parameter: serialnumber"]),
        ("token.id=" + SPENDER_EVM, ["Invalid parameter: token.id"]),
        ("serialnumber=2&serialnumber=3", ["Only one equal (eq) operator is allowed for serialnumber"]),
        ("serialnumber=gt:2&serialnumber=gte:3", ["Only one gt/gte operator is allowed for serialnumber"]),
        ("serialnumber=lt:3&serialnumber=lte:2", ["Only one lt/lte operator is allowed for serialnumber"]),
        ("token.id=2&token.id=3", ["Only one equal (eq) operator is allowed for token.id"]),
        ("token.id=gt:2&token.id=gt:3", ["Only one gt/gte operator is allowed for token.id"]),
        ("token.id=lt:3&token.id=lte:2", ["Only one lt/lte operator is allowed for token.id"]),
        ("token.id=ne:3", ["Not equal (ne) operator is not supported for token.id"]),
        ("token.id=3&serialnumber=ne:3", ["Not equal (ne) operator is not supported for serialnumber"]),
        (
            "serialnumber=1&serialnumber=2&token.id=1&token.id=2",
            ["Only one equal (eq) operator is allowed for serialnumber"],
        ),
        ("token.id=1&token.id=gt:0", ["Can't support both range and equal for token.id"]),
        ("token.id=1&serialnumber=1&serialnumber=gt:1", ["Can't support both range and equal for serialnumber"]),
        ("serialnumber=3", ["serialnumber without a token.id parameter filter"]),
        ("serialnumber=lte:3", ["serialnumber without a token.id parameter filter"]),
        ("token.id=gt:1&serialnumber=gt:3", ["token.id must have gte or eq operator"]),
        ("token.id=lt:1&serialnumber=gt:3", ["token.id must have gte or eq operator"]),
        ("token.id=lt:1&serialnumber=lt:3", ["token.id must have lte or eq operator"]),
        ("spender.id=gt:2&spender.id=gte:3", ["Multiple range params not allowed for spender.id"]),
        ("spender.id=lt:3&spender.id=lte:2", ["Multiple range params not allowed for spender.id"]),
        ("spender.id=ne:3", ["Not equals (ne) comparison operator is not supported"]),
        ("token.id=gt:1&serialnumber=gt:3&spender.id=ne:3", ["token.id must have gte or eq operator"]),
        ("spender.id=0.0.x", ["Invalid parameter: spender.id"]),
        ("timestamp=1", ["Unknown query parameter: timestamp"]),
    ],
)
def test_bad_input(nfts: TestClient, query: str, expected: list[str]) -> None:
    response = nfts.get(f"{BASE}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_answers_match_the_reference_schema(nfts: TestClient) -> None:
    validator = reference_openapi.validator("/api/v1/accounts/{idOrAliasOrEvmAddress}/nfts")
    for url in (BASE, f"{BASE}?limit=2", "/api/v1/accounts/9/nfts"):
        errors = list(validator.iter_errors(nfts.get(url).json()))
        assert errors == [], [error.message for error in errors]
