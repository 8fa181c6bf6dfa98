"""GET /api/v1/accounts/{id}/allowances/tokens against a real PostgreSQL: path forms, every parameter, the
(spender, token) keyset, next links, and every bad input."""

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
BASE = "/api/v1/accounts/1001/allowances/tokens"
BIG = 9223372036854775807

ROWS = [  # (spender, token, amount)
    (2001, 10001, 1),
    (2001, 10002, 2),
    (2001, 10003, 3),
    (3001, 10001, 4),
    (3001, 10004, 5),
    (4001, 10002, 6),
    (4001, 10005, 0),  # spent: hidden
    (5001, 10001, BIG - 10),
]

SETUP: dict[str, Any] = {
    "accounts": [
        {"num": 1001, "alias": ALIAS, "evm_address": EVM},
        {"num": 2001},
        {"num": 3001, "evm_address": SPENDER_EVM},
        {"num": 4001},
        {"num": 5001},
    ],
    "tokenAllowances": [
        {
            "amount": amount,
            "amount_granted": BIG if amount == BIG - 10 else amount + 10,
            "owner": 1001,
            "spender": spender,
            "token_id": token,
            "timestamp_range": f"[{1234567890000000000 + index},)",
        }
        for index, (spender, token, amount) in enumerate(ROWS)
    ]
    + [
        {"amount": 7, "owner": 2001, "spender": 3001, "token_id": 10001, "timestamp_range": "[1,)"},
        {"amount": 8, "owner": 1001, "spender": 2001, "token_id": 10009, "timestamp_range": "[1,2)"},  # history
    ],
}

VISIBLE = [(spender, token) for spender, token, amount in ROWS if amount > 0]


@pytest.fixture
def allowances(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def pairs(response: Any) -> list[tuple[int, int]]:
    assert response.status_code == 200, response.text
    return [
        (int(item["spender"].split(".")[2]), int(item["token_id"].split(".")[2]))
        for item in response.json()["allowances"]
    ]


def messages(response: Any) -> list[str]:
    assert response.status_code == 400, response.text
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_shape_headers_and_encodings(allowances: TestClient) -> None:
    response = allowances.get(BASE)
    assert response.headers["cache-control"] == "public, max-age=1"
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert body["links"] == {"next": None}
    assert body["allowances"][0] == {
        "amount": 1,
        "amount_granted": 11,
        "owner": "0.0.1001",
        "spender": "0.0.2001",
        "timestamp": {"from": "1234567890.000000000", "to": None},
        "token_id": "0.0.10001",
    }
    assert list(body["allowances"][0]) == ["amount", "amount_granted", "owner", "spender", "timestamp", "token_id"]
    assert body["allowances"][-1]["amount"] == BIG - 10
    assert body["allowances"][-1]["amount_granted"] == BIG
    assert pairs(response) == VISIBLE


PATHS = ["1001", "0.1001", "0.0.1001", "0x00000000000000000000000000000000000003e9", ALIAS, f"0.{ALIAS}"]


@pytest.mark.parametrize("path", [*PATHS, f"0.0.{ALIAS}", EVM, f"0x{EVM}", f"0.0.{EVM}"])
def test_path_forms(allowances: TestClient, path: str) -> None:
    assert pairs(allowances.get(f"/api/v1/accounts/{path}/allowances/tokens")) == VISIBLE


def test_path_errors(allowances: TestClient) -> None:
    assert allowances.get("/api/v1/accounts/9999/allowances/tokens").json() == {
        "allowances": [],
        "links": {"next": None},
    }
    response = allowances.get(
        "/api/v1/accounts/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/allowances/tokens"
    )
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "No account with a matching alias found"}]}}
    response = allowances.get("/api/v1/accounts/0x" + "12" * 20 + "/allowances/tokens")
    assert response.status_code == 404
    assert messages_of(response) == ["Not found"]
    assert messages(allowances.get("/api/v1/accounts/abc/allowances/tokens")) == [
        "Invalid parameter: idOrAliasOrEvmAddress"
    ]


def messages_of(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_order_desc(allowances: TestClient) -> None:
    assert pairs(allowances.get(f"{BASE}?order=desc")) == VISIBLE[::-1]
    assert pairs(allowances.get(f"{BASE}?order=DESC")) == VISIBLE[::-1]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("spender.id=2001", [(2001, 10001), (2001, 10002), (2001, 10003)]),
        ("spender.id=eq:0.0.2001", [(2001, 10001), (2001, 10002), (2001, 10003)]),
        ("spender.id=0.2001", [(2001, 10001), (2001, 10002), (2001, 10003)]),
        ("spender.id=0x00000000000000000000000000000000000007d1", [(2001, 10001), (2001, 10002), (2001, 10003)]),
        (f"spender.id={SPENDER_EVM}", [(3001, 10001), (3001, 10004)]),
        (f"spender.id=0x{SPENDER_EVM}", [(3001, 10001), (3001, 10004)]),
        (f"spender.id=gte:{SPENDER_EVM}", [(3001, 10001), (3001, 10004), (4001, 10002), (5001, 10001)]),
        ("spender.id=0x" + "12" * 20, []),
        ("spender.id=lt:0x" + "12" * 20, []),
        ("spender.id=gt:3001", [(4001, 10002), (5001, 10001)]),
        ("spender.id=gte:3001&spender.id=lt:5001", [(3001, 10001), (3001, 10004), (4001, 10002)]),
        ("spender.id=lte:2001", [(2001, 10001), (2001, 10002), (2001, 10003)]),
        ("spender.id=9999", []),
        # token.id with an equal spender: plain conditions
        ("spender.id=2001&token.id=10002", [(2001, 10002)]),
        ("spender.id=2001&token.id=gt:10001", [(2001, 10002), (2001, 10003)]),
        ("spender.id=2001&token.id=gte:10002&token.id=lt:10003", [(2001, 10002)]),
        ("spender.id=2001&token.id=0x0000000000000000000000000000000000002712", [(2001, 10002)]),
        # the (spender, token) tuple
        (
            "spender.id=gte:2001&token.id=gt:10002",
            [(2001, 10003), (3001, 10001), (3001, 10004), (4001, 10002), (5001, 10001)],
        ),
        (
            "spender.id=gte:2001&token.id=gte:10002",
            [(2001, 10002), (2001, 10003), (3001, 10001), (3001, 10004), (4001, 10002), (5001, 10001)],
        ),
        ("spender.id=lte:3001&token.id=lt:10004", [(2001, 10001), (2001, 10002), (2001, 10003), (3001, 10001)]),
        (
            "spender.id=gte:2001&spender.id=lte:3001&token.id=gt:10002&token.id=lt:10004",
            [(2001, 10003), (3001, 10001)],
        ),
        ("spender.id=gte:3001&spender.id=lte:3001&token.id=gt:10001&token.id=lt:10005", [(3001, 10004)]),
        ("spender.id=gt:2001&spender.id=lte:4001&token.id=lte:10001", [(3001, 10001), (3001, 10004)]),
        ("spender.id=gte:2001&spender.id=lte:4001&token.id=10002", [(2001, 10002), (4001, 10002)]),
        ("spender.id=gt:1000&spender.id=lt:9000&token.id=10001", [(2001, 10001), (3001, 10001), (5001, 10001)]),
    ],
)
def test_filters(allowances: TestClient, query: str, expected: list[tuple[int, int]]) -> None:
    assert pairs(allowances.get(f"{BASE}?{query}")) == expected


def follow(client: TestClient, url: str) -> tuple[list[tuple[int, int]], list[str]]:
    seen: list[tuple[int, int]] = []
    links: list[str] = []
    next_url: str | None = url
    while next_url:
        response = client.get(next_url)
        seen += pairs(response)
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
        "spender.id=2001",
        "spender.id=2001&order=desc",
        "spender.id=gte:2001&token.id=gt:10002",
        "spender.id=gte:2001&token.id=gt:10002&order=desc",
        "spender.id=gte:2001&spender.id=lte:4001&token.id=gt:10001&token.id=lt:10004",
        "spender.id=gte:2001&spender.id=lte:4001&token.id=gt:10001&token.id=lt:10004&order=desc",
        "spender.id=lte:4001&token.id=lt:10005&order=desc",
        "spender.id=gt:2001&spender.id=lte:5001&token.id=10001",
        "spender.id=gt:2001&spender.id=lte:5001&token.id=10001&order=desc",
        "spender.id=2001&spender.id=lte:9000",
    ],
)
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_following_next_links_gives_the_whole_answer(allowances: TestClient, query: str, limit: int) -> None:
    if "spender.id=2001&spender.id=lte" in query:
        assert messages(allowances.get(f"{BASE}?{query}")) == ["Can't support both range and equal for spender.id"]
        return
    whole = pairs(allowances.get(f"{BASE}?{query}"))
    seen, _ = follow(allowances, f"{BASE}?{query}&limit={limit}")
    assert seen == whole


def test_next_links(allowances: TestClient) -> None:
    _, links = follow(allowances, f"{BASE}?limit=2")
    assert links == [
        f"{BASE}?limit=2&spender.id=gte:0.0.2001&token.id=gt:0.0.10002",
        f"{BASE}?limit=2&spender.id=gte:0.0.3001&token.id=gt:0.0.10001",
        f"{BASE}?limit=2&spender.id=gte:0.0.4001&token.id=gt:0.0.10002",
    ]
    _, links = follow(allowances, f"{BASE}?spender.id=2001&limit=2")
    assert links == [f"{BASE}?spender.id=2001&limit=2&token.id=gt:0.0.10002"]
    _, links = follow(allowances, f"{BASE}?spender.id=gte:2001&spender.id=lte:4001&token.id=10002&limit=1")
    assert links == [f"{BASE}?spender.id=lte:4001&spender.id=gt:0.0.2001&token.id=10002&limit=1"]
    _, links = follow(allowances, f"{BASE}?spender.id=gte:2001&token.id=gt:10002&order=desc&limit=4")
    assert links == [
        f"{BASE}?spender.id=gte:2001&spender.id=lte:0.0.3001&token.id=gt:10002&token.id=lt:0.0.10001&order=desc&limit=4"
    ]
    alias_path = f"/api/v1/accounts/0.0.{ALIAS}/allowances/tokens"
    assert allowances.get(f"{alias_path}?limit=5").json()["links"]["next"] == (
        f"{alias_path}?limit=5&spender.id=gte:0.0.3001&token.id=gt:0.0.10004"
    )


def test_next_link_writes_order_in_lower_case(allowances: TestClient) -> None:
    response = allowances.get(f"{BASE}?spender.id=gte:2001&token.id=gt:10002&order=DESC&limit=4")
    assert response.json()["links"]["next"] == (
        f"{BASE}?spender.id=gte:2001&spender.id=lte:0.0.3001&token.id=gt:10002&token.id=lt:0.0.10001&order=desc&limit=4"
    )


def test_no_link_when_both_keys_are_equal_or_the_page_ends_the_data(allowances: TestClient) -> None:
    assert allowances.get(f"{BASE}?spender.id=2001&token.id=10001&limit=1").json()["links"]["next"] is None
    assert allowances.get(f"{BASE}?limit=7").json()["links"]["next"] is None
    response = allowances.get(f"{BASE}?spender.id=lte:2001&limit=3")
    assert response.json()["links"]["next"] is None


def test_reference_pagination_mode(allowances: TestClient, api_settings: Settings) -> None:
    reconfigure(allowances, dataclasses.replace(api_settings, pagination_probe=False))
    response = allowances.get(f"{BASE}?limit=7")
    assert response.json()["links"]["next"] == f"{BASE}?limit=7&spender.id=gte:0.0.5001&token.id=gt:0.0.10001"
    # the empty-range check still suppresses a link that can only lead to an empty page
    response = allowances.get(f"{BASE}?spender.id=lte:3001&token.id=10001&limit=2")
    assert pairs(response) == [(2001, 10001), (3001, 10001)]
    assert response.json()["links"]["next"] is None


def test_limits(allowances: TestClient, api_settings: Settings) -> None:
    reconfigure(allowances, dataclasses.replace(api_settings, limit_max=2))
    response = allowances.get(f"{BASE}?limit=5")
    assert pairs(response) == VISIBLE[:2]
    assert response.json()["links"]["next"] == f"{BASE}?limit=5&spender.id=gte:0.0.2001&token.id=gt:0.0.10002"
    reconfigure(allowances, dataclasses.replace(api_settings, limit_default=3))
    assert pairs(allowances.get(BASE)) == VISIBLE[:3]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        (
            "spender.id=abc&token.id=xyz&order=x&limit=y",
            [
                "Invalid parameter: spender.id",
                "Invalid parameter: token.id",
                "Invalid parameter: order",
                "Invalid parameter: limit",
            ],
        ),
        ("spender.id=1001&spender.id=1002", ["Only one equal (eq) operator is allowed for spender.id"]),
        ("token.id=10001", ["token.id without a spender.id parameter filter"]),
        (
            "spender.id=1001&token.id=10001&token.id=10002",
            ["Only one equal (eq) operator is allowed for token.id"],
        ),
        ("spender.id=gt:1001&spender.id=gte:1002", ["Only one gt/gte operator is allowed for spender.id"]),
        ("spender.id=lt:1001&spender.id=lte:1002", ["Only one lt/lte operator is allowed for spender.id"]),
        ("spender.id=gte:1001&token.id=gt:1&token.id=gte:5", ["Only one gt/gte operator is allowed for token.id"]),
        ("spender.id=lte:1001&token.id=lt:1&token.id=lte:5", ["Only one lt/lte operator is allowed for token.id"]),
        ("spender.id=gt:1001&token.id=gt:1008", ["spender.id must have gte or eq operator"]),
        ("spender.id=lt:1001&token.id=lt:1008", ["spender.id must have lte or eq operator"]),
        ("spender.id=lte:1001&token.id=gt:1008", ["spender.id must have gte or eq operator"]),
        ("spender.id=ne:1001", ["Not equal (ne) operator is not supported for spender.id"]),
        ("spender.id=1&token.id=ne:1001", ["Not equal (ne) operator is not supported for token.id"]),
        ("spender.id=1&spender.id=gt:0", ["Can't support both range and equal for spender.id"]),
        ("spender.id=1&token.id=1&token.id=lt:5", ["Can't support both range and equal for token.id"]),
        # the first bad filter in query order is reported
        (
            "token.id=1&token.id=2&spender.id=1&spender.id=2",
            ["Only one equal (eq) operator is allowed for token.id"],
        ),
        (
            "spender.id=1&spender.id=2&token.id=1&token.id=2",
            ["Only one equal (eq) operator is allowed for spender.id"],
        ),
        ("token.id=" + SPENDER_EVM, ["Invalid parameter: token.id"]),
        ("spender.id=0.0.0.1", ["Invalid parameter: spender.id"]),
        ("spender.id=GT:1", ["Invalid parameter: spender.id"]),
        ("token.id=gt:lt:1", ["Invalid parameter: token.id"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=gt:1", ["Invalid parameter: limit"]),
        ("order=eq:asc", ["Invalid parameter: order"]),
        ("owner=true&limit=-1", ["Invalid parameter: limit", "Unknown query parameter: owner"]),
        (
            "spender.id=1&spender.id=2&spender.id=3&spender.id=4&spender.id=5&spender.id=6&spender.id=7"
            "&spender.id=8&spender.id=9",
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
    ],
)
def test_bad_input(allowances: TestClient, query: str, expected: list[str]) -> None:
    response = allowances.get(f"{BASE}?{query}")
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_path_is_resolved_before_the_query_is_validated(allowances: TestClient) -> None:
    response = allowances.get("/api/v1/accounts/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/allowances/tokens?limit=x")
    assert response.status_code == 404


def test_answers_match_the_reference_schema(allowances: TestClient) -> None:
    validator = reference_openapi.validator("/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/tokens")
    for url in (BASE, f"{BASE}?limit=2", f"{BASE}?spender.id=9"):
        errors = list(validator.iter_errors(allowances.get(url).json()))
        assert errors == [], [error.message for error in errors]


def test_parameter_names_are_case_insensitive(allowances: TestClient) -> None:
    assert pairs(allowances.get(f"{BASE}?Spender.ID=3001&TOKEN.id=10004")) == [(3001, 10004)]


def expected_pairs(
    lower: tuple[str, int] | None, upper: tuple[str, int] | None, order: str
) -> list[tuple[int, int]]:
    """The reference's answer for a spender range: every visible row in it, across token ids, ordered by
    (spender, token)."""

    def inside(spender: int) -> bool:
        ok = True
        if lower is not None:
            ok = ok and (spender > lower[1] if lower[0] == "gt" else spender >= lower[1])
        if upper is not None:
            ok = ok and (spender < upper[1] if upper[0] == "lt" else spender <= upper[1])
        return ok

    return sorted((pair for pair in VISIBLE if inside(pair[0])), reverse=order == "desc")


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("lower", [None, ("gt", 2001), ("gte", 2001), ("gte", 3001), ("gt", 1000)])
@pytest.mark.parametrize("upper", [None, ("lt", 4001), ("lte", 4001), ("lte", 3001), ("lt", 9000)])
def test_spender_range_across_token_ids(
    allowances: TestClient, order: str, lower: tuple[str, int] | None, upper: tuple[str, int] | None
) -> None:
    """A range on spender.id alone returns every row in the range across token ids, in (spender, token) order,
    and following the next links with any limit gives the same rows, each once."""
    parts = [f"spender.id={bound[0]}:{bound[1]}" for bound in (lower, upper) if bound is not None]
    query = "&".join([*parts, f"order={order}"])
    expected = expected_pairs(lower, upper, order)
    assert pairs(allowances.get(f"{BASE}?{query}")) == expected
    for limit in (1, 2, 3):
        seen, _ = follow(allowances, f"{BASE}?{query}&limit={limit}")
        assert seen == expected, limit


TUPLE_BOUNDS = [
    ("spender.id=gte:2001&token.id=gt:10001", lambda p: p > (2001, 10001)),
    ("spender.id=gte:2001&token.id=gte:10002", lambda p: p >= (2001, 10002)),
    ("spender.id=gte:3001&token.id=gt:10004", lambda p: p > (3001, 10004)),
    ("spender.id=lte:4001&token.id=lt:10002", lambda p: p < (4001, 10002)),
    ("spender.id=lte:3001&token.id=lte:10001", lambda p: p <= (3001, 10001)),
    (
        "spender.id=gte:2001&token.id=gt:10002&spender.id=lte:4001&token.id=lt:10002",
        lambda p: (2001, 10002) < p < (4001, 10002),
    ),
    (
        "spender.id=gte:2001&token.id=gte:10003&spender.id=lte:3001&token.id=lte:10004",
        lambda p: (2001, 10003) <= p <= (3001, 10004),
    ),
    ("spender.id=gte:2001&spender.id=lt:5001", lambda p: 2001 <= p[0] < 5001),
    ("spender.id=gt:2001&spender.id=lte:5001", lambda p: 2001 < p[0] <= 5001),
]


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize(("query", "keep"), TUPLE_BOUNDS)
def test_combined_spender_token_keyset(  # noqa: PLR0917 (pytest passes the parameters by name)
    allowances: TestClient, api_settings: Settings, probe: bool, order: str, query: str, keep: Any
) -> None:
    """Bounds on both keys are one (spender, token) tuple range, in both orders and both pagination modes."""
    reconfigure(allowances, dataclasses.replace(api_settings, pagination_probe=probe))
    expected = sorted((pair for pair in VISIBLE if keep(pair)), reverse=order == "desc")
    assert pairs(allowances.get(f"{BASE}?{query}&order={order}")) == expected
    for limit in (1, 2, 3):
        seen, _ = follow(allowances, f"{BASE}?{query}&order={order}&limit={limit}")
        assert seen == expected, limit


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize(
    "bounds", ["spender.id=gte:2002&spender.id=lt:2005", "spender.id=gt:2001&spender.id=lte:2004"]
)
def test_spender_range_over_many_tokens_with_the_default_limit(
    client: TestClient, ledger: Ledger, order: str, bounds: str
) -> None:
    """No limit given: 25 rows a page, the range spans spenders with 20 tokens each; following the links gives
    every row of the range once, in (spender, token) order."""
    rows = [(spender, token) for spender in range(2001, 2007) for token in range(10001, 10021)]
    ledger.load(
        {
            "accounts": [{"num": 1001}],
            "tokenAllowances": [
                {"amount": 1, "owner": 1001, "spender": spender, "token_id": token, "timestamp_range": "[1,)"}
                for spender, token in rows
            ],
        }
    )
    expected = sorted((pair for pair in rows if 2002 <= pair[0] <= 2004), reverse=order == "desc")
    first = client.get(f"{BASE}?{bounds}&order={order}")
    assert len(pairs(first)) == 25
    seen, links = follow(client, f"{BASE}?{bounds}&order={order}")
    assert seen == expected
    assert len(links) == 2
