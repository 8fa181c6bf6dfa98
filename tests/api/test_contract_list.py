"""GET /api/v1/contracts and /api/v1/contracts/{contractIdOrAddress}: fields, every parameter, pagination,
bytecode sources, history by timestamp and bad input (4xx, never 500)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/contracts"
CREATE2 = "70f2b2914a2a4b783faefb75f459a580616fcb5e"
SETUP: dict[str, Any] = {
    "contracts": [
        {"num": 8001, "created_timestamp": "1000", "file_id": "5001", "key": [1, 1, 1],
         "timestamp_range": "[1000, 2000]"},
        {"num": 8001, "created_timestamp": "1000", "file_id": "5001", "key": [1, 1, 1], "ethereum_nonce": 1,
         "runtime_bytecode": "0x6080", "timestamp_range": "[2001,)"},
        {"num": 8002, "created_timestamp": "3000", "auto_renew_period": 1500, "evm_address": CREATE2,
         "initcode": "0xabcd", "timestamp_range": "[3000,)"},
        {"num": 8003, "created_timestamp": "4000", "expiration_timestamp": "9000", "deleted": True,
         "obtainer_id": "7001", "proxy_account_id": "7005", "auto_renew_account_id": "7006",
         "timestamp_range": "[4000,)"},
    ],
    "accounts": [{"num": 8004}],
    "filedata": [
        {"entity_id": 5001, "consensus_timestamp": "900", "file_data": "6080", "transaction_type": 17},
        {"entity_id": 5001, "consensus_timestamp": "950", "file_data": "6040", "transaction_type": 16},
        {"entity_id": 5001, "consensus_timestamp": "1001", "file_data": "ffff", "transaction_type": 16},
    ],
}  # fmt: skip


@pytest.fixture
def contracts(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def ids(body: dict[str, Any]) -> list[str]:
    return [item["contract_id"] for item in body["contracts"]]


def test_list_fields_order_and_cache(contracts: TestClient) -> None:
    response = contracts.get(URL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=10"
    body = response.json()
    assert ids(body) == ["0.0.8003", "0.0.8002", "0.0.8001"]  # accounts are not contracts; deleted ones are
    assert body["links"] == {"next": None}
    assert body["contracts"][1] == {
        "admin_key": None, "auto_renew_account": None, "auto_renew_period": 1500, "contract_id": "0.0.8002",
        "created_timestamp": "0.000003000", "deleted": False, "evm_address": "0x" + CREATE2,
        "expiration_timestamp": "1500.000003000", "file_id": None, "max_automatic_token_associations": 0,
        "memo": "contract memo", "nonce": None, "obtainer_id": None, "permanent_removal": None,
        "proxy_account_id": None, "timestamp": {"from": "0.000003000", "to": None},
    }  # fmt: skip
    deleted = body["contracts"][0]
    assert (deleted["deleted"], deleted["expiration_timestamp"], deleted["obtainer_id"]) == (
        True,
        "0.000009000",
        "0.0.7001",
    )
    assert (deleted["proxy_account_id"], deleted["auto_renew_account"]) == ("0.0.7005", "0.0.7006")
    current = body["contracts"][2]
    assert current["evm_address"] == "0x0000000000000000000000000000000000001f41"  # long-zero of the num
    assert current["admin_key"] == {"_type": "ProtobufEncoded", "key": "010101"}
    assert current["timestamp"] == {"from": "0.000002001", "to": None}
    assert reference_schema_errors(URL, body) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("order=asc", ["0.0.8001", "0.0.8002", "0.0.8003"]),
        ("order=DESC", ["0.0.8003", "0.0.8002", "0.0.8001"]),
        ("contract.id=8002", ["0.0.8002"]),
        ("contract.id=0.8002", ["0.0.8002"]),
        ("contract.id=0.0.8002", ["0.0.8002"]),
        ("contract.id=eq:0.0.8002", ["0.0.8002"]),
        (f"contract.id={CREATE2}", ["0.0.8002"]),
        (f"contract.id={CREATE2.upper()}", ["0.0.8002"]),
        (f"contract.id=0.0.{CREATE2}", ["0.0.8002"]),
        ("contract.id=0000000000000000000000000000000000001f41", ["0.0.8001"]),
        ("contract.id=0.0000000000000000000000000000000000001f41", ["0.0.8001"]),
        ("contract.id=8001&contract.id=8003", ["0.0.8003", "0.0.8001"]),
        ("contract.id=8001&contract.id=8003&contract.id=gt:8001", ["0.0.8003"]),
        ("contract.id=gt:0.0.8001&contract.id=lte:8003", ["0.0.8003", "0.0.8002"]),
        ("contract.id=gte:8002&contract.id=lt:8003", ["0.0.8002"]),
        ("contract.id=ne:8002", ["0.0.8003", "0.0.8001"]),
        ("contract.id=8004", []),  # an account
        ("contract.id=gt:9000", []),
    ],
)
def test_list_filters(contracts: TestClient, query: str, expected: list[str]) -> None:
    response = contracts.get(f"{URL}?{query}")
    assert response.status_code == 200, response.text
    assert ids(response.json()) == expected


@pytest.mark.parametrize("probe", [False, True])
def test_list_pages_to_the_end(contracts: TestClient, api_settings: Settings, probe: bool) -> None:
    reconfigure(contracts, dataclasses.replace(api_settings, pagination_probe=probe))
    seen: list[str] = []
    url: str | None = f"{URL}?limit=1&order=asc"
    while url is not None:
        body = contracts.get(url).json()
        seen += ids(body)
        url = body["links"]["next"]
        assert len(seen) <= 4
    assert seen == ["0.0.8001", "0.0.8002", "0.0.8003"]
    first = contracts.get(f"{URL}?limit=2").json()
    assert first["links"]["next"] == "/api/v1/contracts?limit=2&contract.id=lt:0.0.8002"


def test_unknown_create2_filter_is_not_found(contracts: TestClient) -> None:
    address = "60f3f640a8508fc6a86d45df051962668e1e8ac7"
    response = contracts.get(f"{URL}?contract.id={address}")
    assert response.status_code == 404
    message = f"No contract with the given evm address 0x{address} has been found."
    assert response.json() == {"_status": {"messages": [{"message": message}]}}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (f"contract.id=gt:{CREATE2}", "Invalid parameter: contract.id"),
        ("contract.id=gte:0x0000000000000000000000000000000000001f41", "Invalid parameter: contract.id"),
        # the reference takes an EVM address here only without 0x (``isValidContractIdQueryParam``)
        (f"contract.id=0x{CREATE2}", "Invalid parameter: contract.id"),
        (f"contract.id=eq:0x{CREATE2}", "Invalid parameter: contract.id"),
        ("contract.id=0x0000000000000000000000000000000000001f41", "Invalid parameter: contract.id"),
        (f"contract.id=0.0.0x{CREATE2}", "Invalid parameter: contract.id"),
        ("contract.id=abc", "Invalid parameter: contract.id"),
        ("contract.id=1.2.3.4", "Invalid parameter: contract.id"),
        ("contract.id=0.0.1%00", "Invalid parameter: contract.id"),
        ("contract.id=%00", "Invalid parameter: contract.id"),
        ("contract.id=xx:1", "Invalid parameter: contract.id"),
        ("limit=0", "Invalid parameter: limit"),
        ("limit=abc", "Invalid parameter: limit"),
        ("order=up", "Invalid parameter: order"),
        ("order=%00", "Invalid parameter: order"),
        ("timestamp=1", "Unknown query parameter: timestamp"),
        ("%00=1", "Unknown query parameter: \x00"),
    ],
)
def test_list_bad_input(contracts: TestClient, query: str, message: str) -> None:
    response = contracts.get(f"{URL}?{query}")
    assert response.status_code == 400, response.text
    assert response.json()["_status"]["messages"][0]["message"] == message


# --- one contract ------------------------------------------------------------------------------------------------


def one(client: TestClient, path: str) -> dict[str, Any]:
    response = client.get(f"{URL}/{path}")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "public, max-age=1"
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("path", ["8001", "0.8001", "0.0.8001", "0000000000000000000000000000000000001f41",
                                  "0x0000000000000000000000000000000000001f41",
                                  "0.0.0000000000000000000000000000000000001f41"])  # fmt: skip
def test_one_by_id_forms(contracts: TestClient, path: str) -> None:
    body = one(contracts, path)
    assert body["contract_id"] == "0.0.8001"
    # the file's rows from its create up to the contract's creation (the append after it is left out)
    assert (body["bytecode"], body["runtime_bytecode"]) == ("0x60806040", "0x6080")
    assert body["timestamp"] == {"from": "0.000002001", "to": None}
    assert reference_schema_errors(f"{URL}/{{contractIdOrAddress}}", body) == []


@pytest.mark.parametrize("path", [CREATE2, "0x" + CREATE2, "0.0." + CREATE2, "0." + CREATE2])
def test_one_by_evm_address_uses_initcode_without_a_file(contracts: TestClient, path: str) -> None:
    body = one(contracts, path)
    assert body["contract_id"] == "0.0.8002"
    assert (body["bytecode"], body["runtime_bytecode"]) == ("0xabcd", "0x")


def test_one_without_file_rows_or_initcode(contracts: TestClient, ledger: Ledger) -> None:
    ledger.load({"contracts": [{"num": 8010, "file_id": "5099", "created_timestamp": "10"},
                               {"num": 8011, "created_timestamp": "10"}]})  # fmt: skip
    assert one(contracts, "8010")["bytecode"] == "0x"  # a user file with no rows
    assert one(contracts, "8011")["bytecode"] == "0x"  # neither file nor initcode


def test_one_file_content_starts_at_the_latest_create_or_nonempty_update(
    contracts: TestClient, ledger: Ledger
) -> None:
    ledger.load({
        "contracts": [{"num": 8020, "file_id": "5020", "created_timestamp": "100"},
                      {"num": 8021, "file_id": "20", "created_timestamp": "100", "initcode": "0x01"}],
        "filedata": [
            {"entity_id": 5020, "consensus_timestamp": "10", "file_data": "aa", "transaction_type": 17},
            {"entity_id": 5020, "consensus_timestamp": "20", "file_data": "0xbb", "transaction_type": 19},
            {"entity_id": 5020, "consensus_timestamp": "30", "file_data": "", "transaction_type": 19},
            {"entity_id": 5020, "consensus_timestamp": "40", "file_data": "cc", "transaction_type": 16},
            {"entity_id": 20, "consensus_timestamp": "41", "file_data": "cc", "transaction_type": 17},
        ],
    })  # fmt: skip
    assert one(contracts, "8020")["bytecode"] == "0xbbcc"  # text already holding 0x keeps it
    assert one(contracts, "8021")["bytecode"] == "0x01"  # a system file: the initcode


@pytest.mark.parametrize(
    ("query", "expected_from", "expected_to"),
    [
        ("timestamp=0.000001500", "0.000001000", "0.000002001"),
        ("timestamp=lte:0.000001500", "0.000001000", "0.000002001"),
        ("timestamp=lt:0.000002001", "0.000001000", "0.000002001"),
        ("timestamp=lte:0.000002001", "0.000002001", None),
        ("timestamp=gt:0.000001500", "0.000002001", None),
        ("timestamp=gte:0.000002000", "0.000002001", None),
        ("timestamp=ne:0.000002500", "0.000001000", "0.000002001"),
        ("timestamp=lt:0.000002001&timestamp=gt:0.000000010", "0.000001000", "0.000002001"),
    ],
)
def test_one_as_of_a_timestamp(
    contracts: TestClient, query: str, expected_from: str, expected_to: str | None
) -> None:
    body = one(contracts, f"8001?{query}")
    assert body["timestamp"] == {"from": expected_from, "to": expected_to}


@pytest.mark.parametrize(
    "path",
    [
        "8004",  # an account
        "0.0.6001",
        "1.1.8001",  # another realm
        "60f3f640a8508fc6a86d45df051962668e1e8ac7",  # no contract has the address: no lookup, plain 404
        "8001?timestamp=lt:0.000001000",
        "8001?timestamp=lte:0.000002000&timestamp=gt:0.000002000",  # the end of one version, the start of none
    ],
)
def test_one_not_found(contracts: TestClient, path: str) -> None:
    response = contracts.get(f"{URL}/{path}")
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}


def test_results_is_not_a_contract_id(contracts: TestClient) -> None:
    """``/contracts/results`` is the global results route (another module's, listed first); were it missing,
    this route answers 404 rather than calling "results" an invalid contract id."""
    response = contracts.get(f"{URL}/results")
    assert response.status_code in (200, 404), response.text
    if response.status_code == 404:
        assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}
    else:
        assert "results" in response.json()


@pytest.mark.parametrize(
    ("path", "messages"),
    [
        ("abc", ["Invalid parameter: contractid"]),
        ("1.2.3.4", ["Invalid parameter: contractid"]),
        ("0.0.0x" + CREATE2, ["Invalid parameter: contractid"]),
        ("0.0.274877906944", ["Invalid parameter: contractid"]),
        ("%00", ["Invalid parameter: contractid"]),
        ("8001%00", ["Invalid parameter: contractid"]),
        ("8001?timestamp=a&timestamp=el:10&timestamp=-1", ["Invalid parameter: timestamp"] * 3),
        ("8001?timestamp=%00", ["Invalid parameter: timestamp"]),
        ("8001?limit=1", ["Unknown query parameter: limit"]),
    ],
)
def test_one_bad_input(contracts: TestClient, path: str, messages: list[str]) -> None:
    response = contracts.get(f"{URL}/{path}")
    assert response.status_code == 400, response.text
    assert [item["message"] for item in response.json()["_status"]["messages"]] == messages
