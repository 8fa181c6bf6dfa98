"""GET /api/v1/accounts/{id}/airdrops/outstanding and /pending against a real PostgreSQL: both directions,
every parameter, the (counterparty, token, serial number) keyset, next links, and every bad input (the reference
serves these routes from its Java service; we answer in our one error style)."""

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
OUT = "/api/v1/accounts/1000/airdrops/outstanding"
PENDING = "/api/v1/accounts/2000/airdrops/pending"

ROWS = [  # (sender, receiver, token, serial, amount, state)
    (1000, 2000, 301, 0, 10, "PENDING"),
    (1000, 2000, 500, 1, None, "PENDING"),
    (1000, 2000, 500, 2, None, "PENDING"),
    (1000, 2000, 500, 3, None, "PENDING"),
    (1000, 3000, 301, 0, 20, "PENDING"),
    (1000, 3000, 302, 0, 30, "PENDING"),
    (1000, 3000, 500, 4, None, "PENDING"),
    (1000, 3000, 600, 1, None, "CLAIMED"),
    (1000, 4000, 500, 5, None, "CANCELLED"),
    (1500, 2000, 301, 0, 40, "PENDING"),
    (1500, 2000, 500, 6, None, "PENDING"),
]
SENT = [(r, t, s) for sender, r, t, s, _, state in ROWS if sender == 1000 and state == "PENDING"]
RECEIVED = [(sender, t, s) for sender, r, t, s, _, state in ROWS if r == 2000 and state == "PENDING"]


@pytest.fixture
def airdrops(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"accounts": [{"num": 1000, "alias": ALIAS, "evm_address": EVM}]})
    for index, (sender, receiver, token, serial, amount, state) in enumerate(ROWS):
        ledger.execute(
            "insert into token_airdrop (amount, receiver_account_id, sender_account_id, serial_number, state,"
            " timestamp_range, token_id) values ($1, $2, $3, $4, $5::airdrop_state, int8range($6, $7), $8)",
            amount,
            receiver,
            sender,
            serial,
            state,
            1651560386060890949 + index,
            None if state == "PENDING" else 1651560386060890999,
            token,
        )
    return client


def triples(response: Any, party: str = "receiver_id") -> list[tuple[int, int, int]]:
    assert response.status_code == 200, response.text
    return [
        (int(item[party].split(".")[2]), int(item["token_id"].split(".")[2]), item["serial_number"] or 0)
        for item in response.json()["airdrops"]
    ]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_and_headers(airdrops: TestClient) -> None:
    response = airdrops.get(OUT)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["airdrops"][0] == {
        "amount": 10,
        "receiver_id": "0.0.2000",
        "sender_id": "0.0.1000",
        "serial_number": None,
        "timestamp": {"from": "1651560386.060890949", "to": None},
        "token_id": "0.0.301",
    }
    assert body["airdrops"][1]["amount"] is None
    assert body["airdrops"][1]["serial_number"] == 1
    assert list(body["airdrops"][0]) == [
        "amount",
        "receiver_id",
        "sender_id",
        "serial_number",
        "timestamp",
        "token_id",
    ]
    assert triples(response) == SENT


def test_pending(airdrops: TestClient) -> None:
    response = airdrops.get(PENDING)
    assert triples(response, "sender_id") == RECEIVED
    assert all(item["receiver_id"] == "0.0.2000" for item in response.json()["airdrops"])
    assert triples(airdrops.get(f"{PENDING}?sender.id=1500"), "sender_id") == [(1500, 301, 0), (1500, 500, 6)]
    assert triples(airdrops.get(f"{PENDING}?sender.id=gte:1500&serialnumber=gt:0"), "sender_id") == [
        (1500, 500, 6)
    ]
    # after an exclusive sender bound, later lower bounds do not apply (as in the reference)
    received = triples(airdrops.get(f"{PENDING}?sender.id=gt:1000&serialnumber=gt:0"), "sender_id")
    assert received == [(1500, 301, 0), (1500, 500, 6)]
    assert messages(airdrops.get(f"{PENDING}?receiver.id=1")) == ["Unknown query parameter: receiver.id"]
    assert messages(airdrops.get(f"{OUT}?sender.id=1")) == ["Unknown query parameter: sender.id"]


@pytest.mark.parametrize("path", ["1000", "0.1000", "0.0.1000", ALIAS, f"0.0.{ALIAS}", EVM, f"0x{EVM}"])
def test_path_forms(airdrops: TestClient, path: str) -> None:
    assert triples(airdrops.get(f"/api/v1/accounts/{path}/airdrops/outstanding")) == SENT


def test_path_errors(airdrops: TestClient) -> None:
    assert airdrops.get("/api/v1/accounts/9/airdrops/pending").json() == {"airdrops": [], "links": {"next": None}}
    response = airdrops.get("/api/v1/accounts/0x" + "12" * 20 + "/airdrops/outstanding")
    assert (response.status_code, messages(response)) == (404, ["Not found"])
    response = airdrops.get(f"/api/v1/accounts/0.{ALIAS[:-4]}AAAA/airdrops/pending")
    assert (response.status_code, messages(response)) == (404, ["No account with a matching alias found"])
    for path in ("abc", "a.b.c", "0.0.", "0.65537.1001", "0.0.-1001", "9223372036854775807"):
        response = airdrops.get(f"/api/v1/accounts/{path}/airdrops/outstanding")
        assert (response.status_code, messages(response)) == (400, ["Invalid parameter: idOrAliasOrEvmAddress"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("order=desc", SENT[::-1]),
        ("order=Desc", SENT[::-1]),
        ("receiver.id=3000", [(3000, 301, 0), (3000, 302, 0), (3000, 500, 4)]),
        ("receiver.id=gt:2000", [(3000, 301, 0), (3000, 302, 0), (3000, 500, 4)]),
        ("receiver.id=lt:3000", SENT[:4]),
        ("token.id=500", [(2000, 500, 1), (2000, 500, 2), (2000, 500, 3), (3000, 500, 4)]),
        ("token.id=gt:301&token.id=lt:500", [(3000, 302, 0)]),
        ("serialnumber=gt:2", [(2000, 500, 3), (3000, 500, 4)]),
        ("serialnumber=0", [(2000, 301, 0), (3000, 301, 0), (3000, 302, 0)]),
        ("token.id=500&serialnumber=lte:2", [(2000, 500, 1), (2000, 500, 2)]),
        # the (receiver, token, serial) tuple
        ("receiver.id=gte:2000&token.id=gte:500&serialnumber=gt:1", [(2000, 500, 2), (2000, 500, 3), *SENT[4:]]),
        ("receiver.id=gte:2000&token.id=gt:301", SENT[1:]),
        ("receiver.id=lte:3000&token.id=lt:302", SENT[:5]),
        ("receiver.id=lte:3000&token.id=lte:500&serialnumber=lt:3", SENT[:6]),
        ("receiver.id=gt:2000&token.id=gte:500", SENT[4:]),  # a secondary bound needs a primary bound on its side
        ("receiver.id=gte:2000&receiver.id=lte:2000&token.id=gt:301&token.id=lt:500", []),
        ("receiver.id=gte:3000&receiver.id=lte:3000&token.id=gt:301", [(3000, 302, 0), (3000, 500, 4)]),
        ("receiver.id=3000&token.id=gt:301&token.id=lt:500", [(3000, 302, 0)]),
        # a pinned receiver with token and serial ranges reads them as one (token, serial) range
        ("receiver.id=2000&token.id=gte:301&serialnumber=gt:2", [(2000, 500, 1), (2000, 500, 2), (2000, 500, 3)]),
        # per parameter the last lower and the last upper value count
        ("token.id=gt:1&token.id=gte:500", [(2000, 500, 1), (2000, 500, 2), (2000, 500, 3), (3000, 500, 4)]),
        ("token.id=500&token.id=302", [(3000, 302, 0)]),
        (
            "token.id=302&token.id=gt:301",
            [(2000, 500, 1), (2000, 500, 2), (2000, 500, 3), (3000, 302, 0), (3000, 500, 4)],
        ),
    ],
)
def test_filters(airdrops: TestClient, query: str, expected: list[tuple[int, int, int]]) -> None:
    assert triples(airdrops.get(f"{OUT}?{query}")) == expected


def follow(client: TestClient, url: str) -> tuple[list[tuple[int, int, int]], list[str]]:
    seen: list[tuple[int, int, int]] = []
    links: list[str] = []
    next_url: str | None = url
    while next_url:
        response = client.get(next_url)
        seen += triples(response)
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
        "receiver.id=2000",
        "receiver.id=2000&order=desc",
        "receiver.id=gte:2000&token.id=gte:500&serialnumber=gt:1",
        "receiver.id=lte:3000&token.id=lte:500&serialnumber=lt:3&order=desc",
        "token.id=500",
        "receiver.id=2000&token.id=gte:301&serialnumber=gt:0",
        "receiver.id=gt:2&token.id=gte:4&serialnumber=gt:0",
    ],
)
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_following_next_links_gives_the_whole_answer(airdrops: TestClient, query: str, limit: int) -> None:
    whole = triples(airdrops.get(f"{OUT}?{query}"))
    seen, _ = follow(airdrops, f"{OUT}?{query}&limit={limit}")
    assert seen == whole


def test_next_links(airdrops: TestClient) -> None:
    link = airdrops.get(f"{OUT}?limit=1").json()["links"]["next"]
    assert link == f"{OUT}?limit=1&receiver.id=gte:0.0.2000&token.id=gt:0.0.301"
    link = airdrops.get(f"{OUT}?limit=2").json()["links"]["next"]
    assert link == f"{OUT}?limit=2&receiver.id=gte:0.0.2000&token.id=gte:0.0.500&serialnumber=gt:1"
    link = airdrops.get(f"{OUT}?limit=1&receiver.id=gte:2000&order=desc").json()["links"]["next"]
    assert link == (
        f"{OUT}?limit=1&receiver.id=gte:2000&receiver.id=lte:0.0.3000&order=desc&token.id=lte:0.0.500&serialnumber=lt:4"
    )
    link = airdrops.get(f"{OUT}?limit=2&receiver.id=gte:2000&order=desc").json()["links"]["next"]
    assert link == f"{OUT}?limit=2&receiver.id=gte:2000&receiver.id=lte:0.0.3000&order=desc&token.id=lt:0.0.302"
    # a fungible last item: the serial number bound in the paging direction is dropped
    link = airdrops.get(f"{OUT}?limit=1&receiver.id=gt:2&token.id=gte:4&serialnumber=gt:0").json()["links"]["next"]
    assert link == f"{OUT}?limit=1&receiver.id=gte:0.0.2000&token.id=gt:0.0.301"
    link = airdrops.get(f"{OUT}?receiver.id=2000&token.id=500&limit=1").json()["links"]["next"]
    assert link == f"{OUT}?receiver.id=2000&token.id=500&limit=1&serialnumber=gt:1"
    assert (
        airdrops.get(f"{OUT}?receiver.id=2000&token.id=500&serialnumber=1&limit=1").json()["links"]["next"] is None
    )


def test_reference_pagination_and_limits(airdrops: TestClient, api_settings: Settings) -> None:
    reconfigure(airdrops, dataclasses.replace(api_settings, pagination_probe=False))
    link = airdrops.get(f"{OUT}?limit=7").json()["links"]["next"]
    assert link == f"{OUT}?limit=7&receiver.id=gte:0.0.3000&token.id=gte:0.0.500&serialnumber=gt:4"
    reconfigure(airdrops, dataclasses.replace(api_settings, limit_max=2, limit_default=1))
    assert triples(airdrops.get(f"{OUT}?limit=101")) == SENT[:2]
    assert triples(airdrops.get(OUT)) == SENT[:1]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        ("receiver.id=gt:5&receiver.id=lt:6", ["Invalid range provided for receiver.id"]),
        ("receiver.id=5&receiver.id=lt:5", ["Invalid range provided for receiver.id"]),
        ("receiver.id=ne:5", ["Unsupported range operator ne for receiver.id"]),
        ("token.id=ne:5", ["Unsupported range operator ne for token.id"]),
        ("serialnumber=ne:5", ["Unsupported range operator ne for serialnumber"]),
        (
            "receiver.id=1&receiver.id=2&receiver.id=3",
            ["Parameter values count exceeds maximum number allowed: receiver.id count: 3 max: 2"],
        ),
        (
            "serialnumber=1&serialnumber=2&serialnumber=3",
            ["Parameter values count exceeds maximum number allowed: serialnumber count: 3 max: 2"],
        ),
        ("receiver.id=abc", ["Invalid parameter: receiver.id"]),
        ("receiver.id=0.0.", ["Invalid parameter: receiver.id"]),
        ("receiver.id=0.65537.1", ['Invalid entity ID "0.65537.1"']),
        ("receiver.id=" + EVM, ["Invalid parameter: receiver.id"]),
        ("token.id=a.b.c", ["Invalid parameter: token.id"]),
        ("serialnumber=-1", ["Invalid parameter: serialnumber"]),
        ("serialnumber=x", ["Invalid parameter: serialnumber"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=x", ["Invalid parameter: limit"]),
        ("order=dsc", ["Invalid parameter: order"]),
        ("foo=1&order=up", ["Invalid parameter: order", "Unknown query parameter: foo"]),
    ],
)
def test_bad_input(airdrops: TestClient, query: str, expected: list[str]) -> None:
    response = airdrops.get(f"{OUT}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_the_query_is_validated_before_the_account_is_looked_up(airdrops: TestClient) -> None:
    response = airdrops.get("/api/v1/accounts/0x" + "12" * 20 + "/airdrops/pending?sender.id=ne:1")
    assert (response.status_code, messages(response)) == (400, ["Unsupported range operator ne for sender.id"])


def test_answers_match_the_reference_schema(airdrops: TestClient) -> None:
    validator = reference_openapi.validator("/api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/outstanding")
    # NFT airdrops answer "amount": null (the reference's database and mapper), which its OpenAPI does not allow
    for url in (
        f"{OUT}?serialnumber=0",
        f"{OUT}?serialnumber=0&limit=2",
        "/api/v1/accounts/9/airdrops/outstanding",
    ):
        errors = list(validator.iter_errors(airdrops.get(url).json()))
        assert errors == [], [error.message for error in errors]
    validator = reference_openapi.validator("/api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/pending")
    errors = list(validator.iter_errors(airdrops.get(f"{PENDING}?serialnumber=0").json()))
    assert errors == [], [error.message for error in errors]
