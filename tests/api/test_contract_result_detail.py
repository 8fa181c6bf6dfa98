"""GET /api/v1/contracts/{contractIdOrAddress}/results/{timestamp} and /contracts/results/{transactionIdOrHash}:
the detailed object (logs, state changes, Ethereum fields, hbar), the lookups by timestamp, Ethereum hash and
transaction id with nonce, 206 for a missing call result, call data from a file, Cache-Control and bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.api.resources.transactions.transaction import INVALID_ID
from ledgermirror.settings import Settings

SECOND = 1_000_000_000
T = 1_700_000_000 * SECOND
V = T - 100  # the valid start of the transaction id
TX_ID = "0.0.8001-1699999999-999999900"
HASH = "4a563af33c4871b51a8b108aa2fe1dd5280a30dfb7236170ae5e5e7957eb6392"
BY_TIMESTAMP = f"/api/v1/contracts/0.0.5001/results/{T // SECOND}.{T % SECOND:09d}"
BY_ID = f"/api/v1/contracts/results/{TX_ID}"
BY_HASH = f"/api/v1/contracts/results/{HASH}"


def setup(**ethereum: Any) -> dict[str, Any]:
    return {
        "contracts": [{"num": 5001, "evm_address": "70f2b2914a2a4b783faefb75f459a580616fcb5e"}, {"num": 5002}],
        "contractresults": [
            {
                "consensus_timestamp": T,
                "contract_id": 5001,
                "sender_id": 8001,
                "payer_account_id": 8001,
                "amount": 30,
                "call_result": [6, 6],
                "function_parameters": [],
                "transaction_hash": HASH,
                "transaction_result": 22,
            }
        ],
        "contractlogs": [
            {"consensus_timestamp": T, "contract_id": 5001, "index": 0},
            {"consensus_timestamp": T, "contract_id": 5002, "index": 1, "topic2": None, "topic3": None},
        ],
        "contractStateChanges": [
            {"consensus_timestamp": T, "contract_id": 5001, "slot": [1, 1]},
            {"consensus_timestamp": T, "contract_id": 5001, "slot": [3, 3], "migration": True},
            {"consensus_timestamp": T, "contract_id": 5002, "slot": [2, 2], "value_written": None},
        ],
        "recordFiles": [{"index": 17, "consensus_start": T - 5, "consensus_end": T + 5, "hash": "ab" * 48}],
        "transactions": [
            {"consensus_timestamp": T, "payerAccountId": "0.0.8001", "valid_start_timestamp": V, "type": 50},
            {
                "consensus_timestamp": T + 1,
                "payerAccountId": "0.0.8001",
                "valid_start_timestamp": V,
                "nonce": 1,
                "result": 11,
            },
        ],
        "ethereumtransactions": [
            {
                "consensus_timestamp": T,
                "payer_account_id": 8001,
                "hash": HASH,
                "value": "0x0001158e460913d00000",
                **ethereum,
            }
        ],
    }


def test_by_timestamp(client: TestClient, ledger: Ledger) -> None:
    ledger.load(setup(call_data="0x0707", gas_limit=15000, type=0, signature_v="0x1b"))
    response = client.get(BY_TIMESTAMP)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "public, max-age=600"
    body = response.json()
    assert body["function_parameters"] == "0x0707"
    assert body["gas_limit"] == 15000
    assert body["amount"] == 2_000_000_000
    assert body["v"] == 27 and body["type"] == 0
    assert body["block_number"] == 17 and body["block_hash"] == "0x" + "ab" * 48
    assert [log["index"] for log in body["logs"]] == [0, 1]
    assert body["logs"][1]["address"] == "0x000000000000000000000000000000000000138a"
    assert len(body["logs"][1]["topics"]) == 2
    assert body["logs"][0]["data"] == "0x" + "0123".rjust(64, "0")
    slots = [(change["contract_id"], change["slot"][-4:]) for change in body["state_changes"]]
    assert slots == [("0.0.5001", "0101"), ("0.0.5001", "0303"), ("0.0.5002", "0202")]  # its own migrations too
    assert body["state_changes"][2]["value_written"] is None
    assert list(body)[-1] == "authorization_list" and body["authorization_list"] == []
    for path in (
        "5001",
        "0.5001",
        "70f2b2914a2a4b783faefb75f459a580616fcb5e",
        "0x0000000000000000000000000000000000001389",
    ):
        url = BY_TIMESTAMP.replace("0.0.5001", path)
        assert client.get(url).json() == body
    weibars = client.get(BY_TIMESTAMP + "?hbar=false").json()
    assert weibars["amount"] == 20_000_000_000_000_000_000


def test_by_id_and_hash(client: TestClient, ledger: Ledger) -> None:
    ledger.load(setup())
    by_id = client.get(BY_ID)
    assert by_id.status_code == 200, by_id.text
    assert by_id.headers["cache-control"] == "public, max-age=600"
    body = by_id.json()
    assert body["timestamp"] == f"{T // SECOND}.{T % SECOND:09d}"
    assert body["hash"] == "0x" + HASH
    # not the path contract's route: migrations are left out
    assert [change["slot"][-4:] for change in body["state_changes"]] == ["0101", "0202"]
    assert client.get(BY_HASH).json() == body
    assert client.get(f"/api/v1/contracts/results/0x{HASH}?nonce=3").json() == body  # nonce ignored for hashes
    assert client.get(f"{BY_ID}?nonce=1&nonce=0").json() == body  # the last nonce wins
    assert client.get(f"{BY_ID}?nonce=1").status_code == 404  # that child has no contract result
    assert client.get(f"{BY_ID}?hbar=true").json() == body


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/contracts/results/0.0.8001-1699999999-999999901",
        "/api/v1/contracts/results/" + "ab" * 32,
        "/api/v1/contracts/0.0.5002/results/1700000000.000000001",
        "/api/v1/contracts/0.0.5003/results/1700000000.000000000",
        "/api/v1/contracts/results/0.0.8001-9223372036-854775807?nonce=2147483647",
        "/api/v1/contracts/0.0.5001/results/9223372036.854775807",
    ],
)
def test_not_found(client: TestClient, ledger: Ledger, url: str) -> None:
    ledger.load(setup())
    response = client.get(url)
    assert response.status_code == 404
    assert response.json()["_status"]["messages"] == [{"message": "Not found"}]


def test_partial_result_and_call_data_file(client: TestClient, ledger: Ledger) -> None:
    data = setup(call_data_id=5010)
    data["contractresults"][0]["call_result"] = None
    data["filedata"] = [
        {"entity_id": 5010, "consensus_timestamp": T - 30, "file_data": [1, 1]},
        {"entity_id": 5010, "consensus_timestamp": T - 20, "file_data": [2, 2], "transaction_type": 19},
        {"entity_id": 5010, "consensus_timestamp": T - 10, "file_data": [3], "transaction_type": 16},
    ]
    ledger.load(data)
    for url in (BY_TIMESTAMP, BY_ID, BY_HASH):
        response = client.get(url)
        assert response.status_code == 206
        assert response.json()["call_result"] == "0x"
        assert response.json()["function_parameters"] == "0x020203"  # the newest update and the append after it


BAD = [
    (f"{BY_ID}?nonce=-1&nonce=2147483648&nonce=x&nonce=lt:1", ["Invalid parameter: nonce"] * 4),
    (f"{BY_HASH}?nonce=%00", ["Invalid parameter: nonce"]),
    (f"{BY_ID}?hbar=maybe", ["Invalid parameter: hbar"]),
    (f"{BY_ID}?limit=1", ["Unknown query parameter: limit"]),
    ("/api/v1/contracts/results/1", [INVALID_ID]),
    ("/api/v1/contracts/results/x", [INVALID_ID]),
    ("/api/v1/contracts/results/%00", [INVALID_ID]),
    ("/api/v1/contracts/results/0.0.x-1-2", [INVALID_ID]),
    ("/api/v1/contracts/results/0.0.1-99999999999-1", [INVALID_ID]),
    ("/api/v1/contracts/results/0.0.274877906944-1-1", [INVALID_ID]),
    ("/api/v1/contracts/results/" + "ab" * 31, [INVALID_ID]),
    ("/api/v1/contracts/results/0x" + "ab" * 33, [INVALID_ID]),
    ("/api/v1/contracts/results/" + "ab" * 48, [INVALID_ID]),
    (f"{BY_TIMESTAMP}?index=3&limit=2", ["Unknown query parameter: index", "Unknown query parameter: limit"]),
    (f"{BY_TIMESTAMP}?hbar=%00", ["Invalid parameter: hbar"]),
    ("/api/v1/contracts/x/results/1.2.3", ["Invalid parameter: contractid", "Invalid parameter: timestamp"]),
    ("/api/v1/contracts/%00/results/1", ["Invalid parameter: contractid"]),
    ("/api/v1/contracts/5001/results/%00", ["Invalid parameter: timestamp"]),
    ("/api/v1/contracts/5001/results/12345678901", ["Invalid parameter: timestamp"]),
    ("/api/v1/contracts/5001/results/1.1234567890", ["Invalid parameter: timestamp"]),
]


@pytest.mark.parametrize(("url", "messages"), BAD)
def test_bad_input(client: TestClient, url: str, messages: list[str]) -> None:
    response = client.get(url)
    assert response.status_code == 400, response.text
    assert [item["message"] for item in response.json()["_status"]["messages"]] == messages


def test_unknown_create2_address(client: TestClient) -> None:
    response = client.get("/api/v1/contracts/0x5555555555555555555555555555555555555555/results/1.000000001")
    assert response.status_code == 404
    message = "No contract with the given evm address 0x5555555555555555555555555555555555555555 has been found."
    assert response.json()["_status"]["messages"] == [{"message": message}]


@pytest.mark.parametrize("delegation", [True, False])
def test_authorization_list_follows_the_delegation_setting(
    client: TestClient, ledger: Ledger, api_settings: Settings, delegation: bool
) -> None:
    """The reference's ``response.enableDelegationAddress``: with it, an Ethereum transaction's list (``[]`` when
    NULL) ends the object; without it (the reference service's default) there is no ``authorization_list`` key."""
    ledger.load(setup(type=4))
    reconfigure(client, dataclasses.replace(api_settings, enable_delegation_address=delegation))
    for url in (BY_TIMESTAMP, BY_HASH, "/api/v1/contracts/results"):
        response = client.get(url)
        assert response.status_code == 200, response.text
        body = response.json()
        item = body["results"][0] if "results" in body else body
        if delegation:
            assert list(item)[-1] == "authorization_list" and item["authorization_list"] == []
        else:
            assert "authorization_list" not in item
