"""GET /api/v1/contracts/results/logs and /api/v1/contracts/{id}/results/logs against a real PostgreSQL: path
forms, every parameter, the (timestamp, index) keyset followed to the end, blocks, bindTimestampRange, and every
bad input (4xx, never 500)."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

T0 = 1639010141_000_000_000
SECOND = 1_000_000_000
CREATE2 = "70f2b2914a2a4b783faefb75f459a580616fcb5e"
TRANSFER = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
APPROVAL = "8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
HASH_48 = "9db63968721fc76815d11b0b97734669bf88ae3810e07c199924553f0548eb9975fd5495d79b456de5b3c8e1ec8ae460"
GLOBAL = "/api/v1/contracts/results/logs"
ONE = "/api/v1/contracts/0.0.1000/results/logs"

# (timestamp offset in seconds, index, contract num, topic0); three record files hold seconds 0, 10 and 20
LOGS = [
    (0, 0, 1000, TRANSFER),
    (0, 1, 1000, APPROVAL),
    (0, 2, 1001, TRANSFER),
    (10, 0, 1001, TRANSFER),
    (10, 1, 1000, "0a"),
    (10, 2, 1000, TRANSFER),
    (20, 0, 1000, APPROVAL),
    (30, 0, 1000, TRANSFER),  # in no record file
]
SETUP: dict[str, Any] = {
    "contracts": [
        {"num": 1000, "evm_address": CREATE2, "timestamp_range": "[1,)"},
        {"num": 1001, "timestamp_range": "[1,)"},
    ],
    "recordFiles": [
        {
            "index": 7 + block,
            "consensus_start": T0 + block * 10 * SECOND,
            "consensus_end": T0 + block * 10 * SECOND + SECOND // 2,
            "hash": f"{block + 10:02x}" * 48,
        }
        for block in range(3)
    ],
    "contractlogs": [
        {
            "consensus_timestamp": T0 + offset * SECOND,
            "index": index,
            "contract_id": contract,
            "root_contract_id": 1000,
            "topic0": "0x" + topic,
            "topic1": "0x03e8",  # stored as the importer does: without leading zero bytes
            "topic2": None,
            "topic3": None,
            "data": "0x" + "ab" * (offset % 3 + 1),
            "transaction_hash": f"0x{HASH_48[:62]}{offset:02d}",
            "transaction_index": offset // 10,
        }
        for offset, index, contract, topic in LOGS
    ],
    "transactionhashes": [
        {"consensus_timestamp": T0 + 10 * SECOND, "hash": "0x" + HASH_48, "payer_account_id": 2001},
        {
            "consensus_timestamp": T0 + 20 * SECOND,
            "hash": "0x" + HASH_48[:64] + "00" * 16,
            "payer_account_id": 2001,
        },
    ],
}


def keys(body: dict[str, Any]) -> list[tuple[str, int]]:
    return [(log["timestamp"], log["index"]) for log in body["logs"]]


def key(offset: int, index: int) -> tuple[str, int]:
    return f"{(T0 + offset * SECOND) // SECOND}.{(T0 + offset * SECOND) % SECOND:09d}", index


def expected(contract: int | None = None, *, order: str = "desc") -> list[tuple[str, int]]:
    found = sorted((offset, index) for offset, index, num, _ in LOGS if contract in (None, num))
    found = found if order == "asc" else found[::-1]
    return [key(offset, index) for offset, index in found]


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def test_a_log_renders_as_the_reference_does(loaded: TestClient) -> None:
    response = loaded.get(f"{ONE}?timestamp={key(10, 1)[0]}&index=1")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=1"
    assert response.json() == {
        "logs": [
            {
                "address": "0x" + CREATE2,
                "bloom": "0x0123",
                "contract_id": "0.0.1000",
                "data": "0x" + "abab".rjust(64, "0"),
                "index": 1,
                "topics": ["0x" + "0a".rjust(64, "0"), "0x" + "3e8".rjust(64, "0")],
                "block_hash": "0x" + "0b" * 48,
                "block_number": 8,
                "root_contract_id": "0.0.1000",
                "timestamp": key(10, 1)[0],
                "transaction_hash": f"0x{HASH_48[:62]}10",
                "transaction_index": 1,
            }
        ],
        "links": {"next": None},
    }
    other = loaded.get(f"{GLOBAL}?timestamp={key(0, 2)[0]}&index=2").json()["logs"][0]
    assert other["address"] == "0x" + "3e9".rjust(40, "0")  # no EVM address: the long-zero one
    outside = loaded.get(f"{GLOBAL}?timestamp={key(30, 0)[0]}").json()["logs"][0]
    assert (outside["block_hash"], outside["block_number"]) == ("0x", None)


@pytest.mark.parametrize(
    "contract",
    ["0.0.1000", "1000", "0.1000", CREATE2, "0x" + CREATE2, "0.0." + CREATE2, "0x" + "3e8".rjust(40, "0")],
)
def test_every_path_form_names_the_contract(loaded: TestClient, contract: str) -> None:
    response = loaded.get(f"/api/v1/contracts/{contract}/results/logs")
    assert response.status_code == 200
    assert keys(response.json()) == expected(1000)


def test_path_errors(loaded: TestClient) -> None:
    unknown = "62cf9068fed962cf9068fed962cf9068fed9dddd"
    response = loaded.get(f"/api/v1/contracts/{unknown}/results/logs")
    assert response.status_code == 404
    message = f"No contract with the given evm address 0x{unknown} has been found."
    assert response.json()["_status"]["messages"] == [{"message": message}]
    for bad in ("abc", "1.2.3.4", "0x" + "g" * 40, quote("\x00")):
        response = loaded.get(f"/api/v1/contracts/{bad}/results/logs")
        assert response.status_code == 400, bad
        assert response.json()["_status"]["messages"] == [{"message": "Invalid parameter: contractid"}]
    assert loaded.get("/api/v1/contracts/0.0.4242/results/logs").json() == {"logs": [], "links": {"next": None}}
    # a bad query is a 400 before the address lookup's 404
    assert loaded.get(f"/api/v1/contracts/{unknown}/results/logs?index=x").status_code == 400


def test_global_list_and_order(loaded: TestClient) -> None:
    response = loaded.get(GLOBAL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=10"
    assert keys(response.json()) == expected()
    assert keys(loaded.get(f"{GLOBAL}?order=asc").json()) == expected(order="asc")
    assert keys(loaded.get(f"{ONE}?order=ASC").json()) == expected(1000, order="asc")


def follow(client: TestClient, url: str) -> tuple[list[tuple[str, int]], int]:
    found: list[tuple[str, int]] = []
    pages = 0
    next_url: str | None = url
    while next_url is not None:
        body = client.get(next_url).json()
        found += keys(body)
        next_url = body["links"]["next"]
        pages += 1
        assert pages < 20
    return found, pages


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("base", [GLOBAL, ONE])
def test_pages_follow_to_the_end(
    loaded: TestClient, api_settings: Settings, probe: bool, order: str, base: str
) -> None:
    reconfigure(loaded, dataclasses.replace(api_settings, pagination_probe=probe))
    contract = 1000 if base == ONE else None
    found, pages = follow(loaded, f"{base}?limit=2&order={order}")
    assert found == expected(contract, order=order)
    assert pages >= len(found) // 2
    window = f"timestamp=gte:{key(0, 0)[0]}&timestamp=lte:{key(10, 0)[0]}"
    found, _ = follow(loaded, f"{base}?limit=1&order={order}&{window}&index=gt:0")
    within = [item for item in expected(contract, order=order) if key(0, 0)[0] <= item[0] <= key(10, 0)[0]]
    assert found == [item for item in within if item[0] != key(0, 0)[0] or item[1] > 0]


def test_first_page_link(loaded: TestClient) -> None:
    body = loaded.get(f"{ONE}?limit=1").json()
    assert body["links"]["next"] == f"{ONE}?limit=1&timestamp=lte:{key(30, 0)[0]}&index=lt:0"
    body = loaded.get(f"{GLOBAL}?timestamp={key(0, 0)[0]}&limit=2").json()
    assert body["links"]["next"] == f"{GLOBAL}?timestamp={key(0, 0)[0]}&limit=2&index=lt:1"
    both = loaded.get(f"{GLOBAL}?timestamp={key(0, 0)[0]}&index=1&limit=1").json()
    assert keys(both) == [key(0, 1)] and both["links"]["next"] is None


def test_index_and_timestamp_bounds(loaded: TestClient) -> None:
    ten = key(10, 0)[0]
    assert keys(loaded.get(f"{GLOBAL}?timestamp={ten}&index=gte:1").json()) == [key(10, 2), key(10, 1)]
    assert keys(loaded.get(f"{GLOBAL}?timestamp={ten}&index=lt:1").json()) == [key(10, 0)]
    assert keys(loaded.get(f"{GLOBAL}?timestamp=gte:{ten}&index=gt:1&order=asc").json()) == [
        key(10, 2), key(20, 0), key(30, 0)
    ]  # fmt: skip
    assert keys(loaded.get(f"{GLOBAL}?timestamp=lte:{ten}&index=lt:1&limit=3").json()) == [
        key(10, 0), key(0, 2), key(0, 1)
    ]  # fmt: skip
    assert keys(loaded.get(f"{GLOBAL}?timestamp=gt:{ten}&timestamp=lt:{key(30, 0)[0]}").json()) == [key(20, 0)]
    # the global route takes the tightest of several bounds; the per-contract route refuses them
    assert keys(loaded.get(f"{GLOBAL}?timestamp=gt:1&timestamp=gt:{ten}&order=asc&limit=1").json()) == [key(20, 0)]
    assert loaded.get(f"{ONE}?timestamp=gt:1&timestamp=gt:{ten}").status_code == 400
    assert loaded.get(f"{GLOBAL}?timestamp=gt:{ten}&timestamp=lt:{ten}").json()["logs"] == []
    assert loaded.get(f"{GLOBAL}?timestamp={ten}&timestamp={key(20, 0)[0]}").json()["logs"] == []


def test_topics(loaded: TestClient) -> None:
    window = f"timestamp=gte:{key(0, 0)[0]}&timestamp=lte:{key(20, 0)[0]}"
    transfers = [(offset, index) for offset, index, _, topic in LOGS if topic == TRANSFER and offset <= 20]
    found = keys(loaded.get(f"{GLOBAL}?topic0={TRANSFER}&{window}").json())
    assert found == [key(*item) for item in sorted(transfers, reverse=True)]
    # leading zeros and 0x do not matter; several values of one topic are alternatives
    assert keys(loaded.get(f"{GLOBAL}?topic0=0x000A&{window}").json()) == [key(10, 1)]
    both = keys(loaded.get(f"{ONE}?topic0=a&topic0={APPROVAL}&{window}").json())
    assert both == [key(20, 0), key(10, 1), key(0, 1)]
    assert keys(loaded.get(f"{ONE}?topic0=a&topic1=3e8&{window}").json()) == [key(10, 1)]
    assert loaded.get(f"{ONE}?topic0=a&topic1=3e9&{window}").json()["logs"] == []
    assert loaded.get(f"{ONE}?topic3=a&{window}").json()["logs"] == []


TOPIC_REASON = "Cannot search topics without a valid timestamp range: "


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("topic0=a", TOPIC_REASON + "No timestamp range or eq operator provided"),
        (
            "topic0=a&timestamp=gte:1",
            TOPIC_REASON + "Timestamp range must have gt (or gte) and lt (or lte), or eq operator",
        ),
        (
            "topic0=a&timestamp=gte:1&timestamp=lte:604802",
            TOPIC_REASON + "Timestamp range by the lower and upper bounds must be positive and within 7d",
        ),
        (
            "topic0=a&timestamp=gte:10&timestamp=lte:5",
            TOPIC_REASON + "Timestamp range by the lower and upper bounds must be positive and within 7d",
        ),
        ("topic1=a&timestamp=ne:5", TOPIC_REASON + "Not equals operator not supported for timestamp param"),
        (
            "topic2=a&timestamp=gt:1&timestamp=gte:2",
            TOPIC_REASON + "Multiple gt or gte operators not permitted for timestamp param",
        ),
        (
            "topic2=a&timestamp=lt:1&timestamp=lte:2",
            TOPIC_REASON + "Multiple lt or lte operators not permitted for timestamp param",
        ),
        (
            "topic3=a&timestamp=1&timestamp=lte:2",
            TOPIC_REASON + "Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param",
        ),
        ("index=1", "timestamp must have eq operator"),
        ("index=1&timestamp=gte:1", "timestamp must have eq operator"),
        ("index=gt:1", "index without a timestamp parameter filter"),
        ("index=gt:1&timestamp=lt:5", "timestamp must have gte or eq operator"),
        ("index=gt:1&timestamp=gt:5", "timestamp must have gte or eq operator"),
        ("index=lt:1&timestamp=gte:5", "timestamp must have lte or eq operator"),
        ("index=ne:1&timestamp=5", "Not equal (ne) operator is not supported for index"),
        ("index=1&index=2&timestamp=5", "Only one equal (eq) operator is allowed for index"),
        ("index=gt:1&index=gte:2&timestamp=5", "Only one gt/gte operator is allowed for index"),
        ("index=lt:1&index=lte:2&timestamp=5", "Only one lt/lte operator is allowed for index"),
        ("index=1&index=lt:2&timestamp=5", "Can't support both range and equal for index"),
        ("timestamp=ne:5", "Not equal (ne) operator is not supported for timestamp"),
        ("timestamp=5&timestamp=6", "Only one equal (eq) operator is allowed for timestamp"),
        ("timestamp=gt:5&timestamp=gte:6", "Only one gt/gte operator is allowed for timestamp"),
        ("timestamp=5&timestamp=lt:6", "Can't support both range and equal for timestamp"),
        ("index=-1&index=a", "Invalid parameter: index"),
        ("index=2147483648", "Invalid parameter: index"),
        ("topic1=0xqqq", "Invalid parameter: topic1"),
        ("topic1=gt:0xaa", "Invalid parameter: topic1"),
        ("topic0=" + "a" * 65, "Invalid parameter: topic0"),
        ("topic0=0x", "Invalid parameter: topic0"),
        ("limit=0", "Invalid parameter: limit"),
        ("order=up", "Invalid parameter: order"),
        ("timestamp=abc", "Invalid parameter: timestamp"),
        ("scheduled=true", "Unknown query parameter: scheduled"),
        ("transaction.hash=" + HASH_48, "Unknown query parameter: transaction.hash"),
    ],
)
def test_contract_route_bad_input(loaded: TestClient, query: str, message: str) -> None:
    response = loaded.get(f"{ONE}?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["_status"]["messages"][0] == {"message": message}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (f"transaction.hash={HASH_48}&transaction.hash={HASH_48}", "Only one transaction.hash filter is allowed"),
        (f"transaction.hash=gt:{HASH_48}", "Invalid parameter: transaction.hash"),
        (f"transaction.hash={HASH_48[:40]}", "Invalid parameter: transaction.hash"),
        ("topic2=0x00&" * 9, "Array limit exceeded. Only 8 elements allowed in an array."),
        ("index=gt:0&timestamp=lt:5", "timestamp must have gte or eq operator"),
        ("timestamp=ne:5", "Not equal (ne) operator is not supported for timestamp"),
    ],
)
def test_global_route_bad_input(loaded: TestClient, query: str, message: str) -> None:
    response = loaded.get(f"{GLOBAL}?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["_status"]["messages"] == [{"message": message}]


@pytest.mark.parametrize("name", ["index", "timestamp", "topic0", "topic3", "limit", "order", "transaction.hash"])
def test_nul_bytes_are_refused(loaded: TestClient, name: str) -> None:
    for base in (GLOBAL, ONE):
        response = loaded.get(f"{base}?{name}=%00")
        assert response.status_code == 400, (base, name)
        assert response.json()["_status"]["messages"][0]["message"] in (
            f"Invalid parameter: {name}",
            f"Unknown query parameter: {name}",
        )


def test_transaction_hash(loaded: TestClient) -> None:
    ten = [key(10, 0), key(10, 1), key(10, 2)]
    for text in (HASH_48, "0x" + HASH_48, HASH_48[:64], "0x" + HASH_48[:64]):
        body = loaded.get(f"{GLOBAL}?transaction.hash={text}&order=asc").json()
        assert keys(body) == ten, text  # a 32-byte prefix matches the oldest first (asc)
    newest = keys(loaded.get(f"{GLOBAL}?transaction.hash={HASH_48[:64]}").json())
    assert newest == [key(20, 0)]  # desc: the newest of the two transactions sharing the prefix
    body = loaded.get(f"{GLOBAL}?transaction.hash={HASH_48}&limit=2&order=asc").json()
    assert body["links"]["next"] == (
        f"{GLOBAL}?transaction.hash={HASH_48}&limit=2&order=asc&timestamp=gte:{ten[0][0]}&index=gt:1"
    )
    assert keys(loaded.get(body["links"]["next"]).json()) == [key(10, 2)]
    assert loaded.get(f"{GLOBAL}?transaction.hash={'1' * 96}").json() == {"logs": [], "links": {"next": None}}
    later = f"{GLOBAL}?transaction.hash={HASH_48}&timestamp=gt:{ten[0][0]}"
    assert loaded.get(later).json()["logs"] == []


def test_bind_timestamp_range_cuts_the_window(loaded: TestClient, api_settings: Settings, ledger: Ledger) -> None:
    ledger.load({"transactions": [{"consensus_timestamp": T0 - 100 * 86_400 * SECOND, "payerAccountId": 2001}]})
    reconfigure(loaded, dataclasses.replace(api_settings, bind_timestamp_range=True))
    week = 7 * 86_400 * SECOND
    width = 60 * 86_400 * SECOND
    body = loaded.get(f"{GLOBAL}?timestamp=gte:{key(0, 0)[0]}&order=asc").json()
    assert keys(body) == expected(order="asc")
    edge = T0 + width - 1
    assert body["links"]["next"] == (
        f"{GLOBAL}?order=asc&timestamp=gte:{edge // SECOND}.{edge % SECOND:09d}&index=gt:0"
    )
    # desc without bounds: from the first transaction, cut to the last 60 days before now (no logs there)
    body = loaded.get(GLOBAL).json()
    assert body["logs"] == [] and body["links"]["next"] is not None
    # a window within the limit is not cut
    body = loaded.get(f"{GLOBAL}?timestamp=gte:{key(0, 0)[0]}&timestamp=lte:{(T0 + week) // SECOND}").json()
    assert keys(body) == expected() and body["links"]["next"] is None
