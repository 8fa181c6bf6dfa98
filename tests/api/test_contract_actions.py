"""GET /api/v1/contracts/results/{transactionIdOrHash}/actions against a real PostgreSQL: both path forms, the
transaction's choice, every parameter, pagination followed to the end, rendering, and every bad input."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

STAMP = 1676540001_234390005
VALID_START = 1676540001_234390000
HASH = "9db63968721fc76815d11b0b97734669bf88ae3810e07c199924553f0548eb98"
BY_ID = "/api/v1/contracts/results/0.0.5001-1676540001-234390000/actions"
BY_HASH = f"/api/v1/contracts/results/0x{HASH}/actions"
TARGET = "70f2b2914a2a4b783faefb75f459a580616fcb5e"

SETUP: dict[str, Any] = {
    "transactions": [
        {
            "consensus_timestamp": STAMP,
            "valid_start_timestamp": VALID_START,
            "payerAccountId": 5001,
            "type": 7,
            "result": 22,
            "nonce": 0,
        },
        {
            "consensus_timestamp": STAMP + 1,
            "valid_start_timestamp": VALID_START,
            "payerAccountId": 5001,
            "type": 7,
            "result": 22,
            "nonce": 1,
        },  # a child: nonce 1 is not the transaction id's
        {
            "consensus_timestamp": STAMP + 5,
            "valid_start_timestamp": VALID_START + 5,
            "payerAccountId": 5001,
            "type": 7,
            "result": 22,
            "nonce": 0,
        },  # a transaction without actions
    ],
    "contractresults": [
        {
            "consensus_timestamp": STAMP,
            "contract_id": 5001,
            "payer_account_id": 5001,
            "transaction_hash": "0x" + HASH,
        },
        {
            "consensus_timestamp": STAMP + 9,
            "contract_id": 5001,
            "payer_account_id": 5001,
            "transaction_hash": "0x" + HASH,
            "transaction_result": 33,
        },  # same hash, failed: not chosen
    ],
    "contractactions": [
        {
            "consensus_timestamp": STAMP,
            "index": 0,
            "call_depth": 0,
            "call_type": 1,
            "call_operation_type": 1,
            "caller": 5001,
            "caller_type": "ACCOUNT",
            "recipient_contract": 8001,
            "payer_account_id": 5001,
            "input": "0xabcd",
            "result_data": "0x1234",
            "result_data_type": 11,
            "value": 5,
        },
        {
            "consensus_timestamp": STAMP,
            "index": 1,
            "call_depth": 1,
            "call_type": 2,
            "call_operation_type": 6,
            "caller": 8001,
            "recipient_account": 8002,
            "payer_account_id": 5001,
            "result_data_type": 12,
        },
        {
            "consensus_timestamp": STAMP,
            "index": 2,
            "call_depth": 1,
            "call_type": 3,
            "call_operation_type": None,
            "caller": 8001,
            "recipient_address": "0x" + TARGET,
            "payer_account_id": 5001,
            "result_data_type": 13,
        },
        {
            "consensus_timestamp": STAMP,
            "index": 3,
            "call_depth": 2,
            "call_type": 4,
            "call_operation_type": 4,
            "caller": 8001,
            "payer_account_id": 5001,
        },
        {"consensus_timestamp": STAMP, "index": 4, "payer_account_id": 9999},  # another payer's
        {"consensus_timestamp": STAMP + 9, "index": 0, "payer_account_id": 5001},  # the failed transaction's
    ],
}


def indexes(body: dict[str, Any]) -> list[int]:
    return [action["index"] for action in body["actions"]]


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def test_actions_render_as_the_reference_does(loaded: TestClient) -> None:
    response = loaded.get(BY_HASH)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=600"
    first, second, third, fourth = response.json()["actions"]
    assert first == {
        "call_depth": 0,
        "call_operation_type": "CALL",
        "call_type": "CALL",
        "caller": "0.0.5001",
        "caller_type": "ACCOUNT",
        "from": "0x0000000000000000000000000000000000001389",
        "gas": 10000,
        "gas_used": 5000,
        "index": 0,
        "input": "0xabcd",
        "recipient": "0.0.8001",
        "recipient_type": "CONTRACT",
        "result_data": "0x1234",
        "result_data_type": "OUTPUT",
        "timestamp": "1676540001.234390005",
        "to": "0x0000000000000000000000000000000000001f41",
        "value": 5,
    }
    assert (second["call_type"], second["call_operation_type"], second["caller_type"]) == (
        "CREATE",
        "CREATE2",
        "CONTRACT",
    )
    assert (second["recipient"], second["recipient_type"], second["to"]) == (
        "0.0.8002",
        "ACCOUNT",
        "0x" + "1f42".rjust(40, "0"),
    )
    assert (second["result_data_type"], second["input"], second["result_data"]) == ("REVERT_REASON", "0x", "0x")
    assert (third["call_type"], third["call_operation_type"], third["result_data_type"]) == (
        "PRECOMPILE",
        "UNKNOWN",
        "ERROR",
    )
    assert (third["recipient"], third["recipient_type"], third["to"]) == (None, None, "0x" + TARGET)
    assert (fourth["call_type"], fourth["call_operation_type"]) == ("SYSTEM", "STATICCALL")
    assert (fourth["recipient"], fourth["to"]) == (None, None)


@pytest.mark.parametrize("path", [BY_ID, BY_HASH, f"/api/v1/contracts/results/{HASH}/actions",
                                  f"/api/v1/contracts/results/0x{HASH.upper()}/actions"])  # fmt: skip
def test_both_path_forms_find_the_transaction(loaded: TestClient, path: str) -> None:
    response = loaded.get(path)
    assert response.status_code == 200
    assert indexes(response.json()) == [0, 1, 2, 3]


def test_not_found_and_empty(loaded: TestClient) -> None:
    for path in (
        "/api/v1/contracts/results/0.0.5001-1676540001-234390001/actions",
        "/api/v1/contracts/results/0.0.5002-1676540001-234390000/actions",
        f"/api/v1/contracts/results/{'1' * 64}/actions",
    ):
        response = loaded.get(path)
        assert response.status_code == 404, path
        assert response.json()["_status"]["messages"] == [{"message": "Not found"}]
    empty = loaded.get("/api/v1/contracts/results/0.0.5001-1676540001-234390005/actions")
    assert empty.status_code == 200
    assert empty.json() == {"actions": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("index=2", [2]),
        ("index=eq:2", [2]),
        ("index=gt:1", [2, 3]),
        ("index=gte:1&index=lt:3", [1, 2]),
        ("index=lte:1", [0, 1]),
        ("index=gt:3", []),
        ("order=desc", [3, 2, 1, 0]),
        ("order=DESC&index=lt:3&limit=2", [2, 1]),
        ("limit=1", [0]),
    ],
)
def test_parameters(loaded: TestClient, query: str, found: list[int]) -> None:
    assert indexes(loaded.get(f"{BY_ID}?{query}").json()) == found


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_follow_to_the_end(loaded: TestClient, api_settings: Settings, probe: bool, order: str) -> None:
    reconfigure(loaded, dataclasses.replace(api_settings, pagination_probe=probe))
    body = loaded.get(f"{BY_HASH}?limit=1&order={order}").json()
    first_link = "gt:0" if order == "asc" else "lt:3"
    assert body["links"]["next"] == f"{BY_HASH}?limit=1&order={order}&index={first_link}"
    found: list[int] = []
    pages = 0
    while body is not None:
        found += indexes(body)
        pages += 1
        link = body["links"]["next"]
        body = loaded.get(link).json() if link else None
    assert found == ([0, 1, 2, 3] if order == "asc" else [3, 2, 1, 0])
    assert pages == (4 if probe else 5)


@pytest.mark.parametrize(
    ("query", "messages"),
    [
        ("index=ne:3", ["Invalid parameter: index"]),
        ("index=eq:test", ["Invalid parameter: index"]),
        ("index=-1", ["Invalid parameter: index"]),
        ("index=%00", ["Invalid parameter: index"]),
        ("limit=%00", ["Invalid parameter: limit"]),
        ("order=%00", ["Invalid parameter: order"]),
        ("order=b&limit=c&nonce=2", ["Invalid parameter: order", "Invalid parameter: limit",
                                     "Unknown query parameter: nonce"]),
    ],
)  # fmt: skip
def test_bad_parameters(loaded: TestClient, query: str, messages: list[str]) -> None:
    response = loaded.get(f"{BY_ID}?{query}")
    assert response.status_code == 400
    assert response.json()["_status"]["messages"] == [{"message": message} for message in messages]


@pytest.mark.parametrize(
    "path", ["1", "x", "0x" + "a" * 62, "a" * 66, "ab" * 48, "0.0.5001-1676540001", "0.0.5001-x-1", quote("\x00")]
)
def test_bad_paths(loaded: TestClient, path: str) -> None:
    response = loaded.get(f"/api/v1/contracts/results/{path}/actions")
    assert response.status_code == 400, path
    message = response.json()["_status"]["messages"][0]["message"]
    assert message.startswith("Invalid Transaction id.")
