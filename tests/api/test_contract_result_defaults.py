"""The newer reference's defaults of detailed contract results (its pull request "Implement fee schedule
handling in contract processing", v0.157.0): where a result has no Ethereum value, ``type`` 0, ``chain_id`` the
network's and ``gas_price`` the fee schedule's gas price for its transaction type at its timestamp (as
``/network/fees`` prices it); ``LEDGERMIRROR_CONTRACT_RESULT_DEFAULTS=false`` keeps the older nulls. Embedded
PostgreSQL, rows through the spec loader, files 0.0.111 and 0.0.112 as the network writes them."""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.testclient import TestClient
from tests.api.test_system_files import CREATE, UPDATE, file_rows
from tests.hapi_files import fee_file, rate_file
from tests.support import Ledger, reconfigure

SECOND = 1_000_000_000
T = 1_700_000_000 * SECOND
CALL, CREATE_CONTRACT, ETHEREUM = 6, 7, 84
# 852000 thousandths of a tinycent per gas at 1 hbar = 12 cents: 71 tinybars (0x47), /network/fees' rule
EXPIRY = 1_800_000_000  # seconds: the current schedule and rate are in force
FIRST = fee_file(([(CALL, 852_000), (CREATE_CONTRACT, 1_068_000), (ETHEREUM, 953_000)], EXPIRY))
SECOND_SCHEDULE = fee_file(([(CALL, 1_704_000)], EXPIRY))
RATES = rate_file((1, 12, EXPIRY), (1, 15, EXPIRY))


def result(offset: int, **extra: Any) -> dict[str, Any]:
    return {"consensus_timestamp": T + offset, "contract_id": 5001, "sender_id": 8001, "payer_account_id": 8001,
            "call_result": [1], "transaction_hash": f"{offset:064x}", **extra}  # fmt: skip


def transaction(offset: int, kind: int) -> dict[str, Any]:
    return {"consensus_timestamp": T + offset, "payerAccountId": "0.0.8001",
            "valid_start_timestamp": T + offset - 1, "type": kind, "result": 22,
            "entity_id": "0.0.5001"}  # fmt: skip


SETUP: dict[str, Any] = {
    "accounts": [{"num": 8001}],
    "contracts": [{"num": 5001}],
    "recordFiles": [{"index": 10, "consensus_start": T, "consensus_end": T + 1000, "hash": "aa" * 48}],
    "transactions": [transaction(10, CALL), transaction(20, CREATE_CONTRACT), transaction(40, CALL)],
    "contractresults": [result(10), result(20), result(40)],
    "filedata": file_rows(112, (T, RATES, CREATE))
    + file_rows(111, (T + 1, FIRST, CREATE), (T + 30, SECOND_SCHEDULE, UPDATE)),
}


def by_time(client: TestClient, url: str) -> dict[str, dict[str, Any]]:
    response = client.get(url)
    assert response.status_code == 200, response.text
    return {item["timestamp"]: item for item in response.json()["results"]}


def test_defaults_of_results_without_ethereum_values(client: TestClient, ledger: Ledger) -> None:
    ledger.load(SETUP)
    found = by_time(client, "/api/v1/contracts/results?order=asc")
    call, create, later = (found[f"1700000000.0000000{offset}"] for offset in (10, 20, 40))
    for item in (call, create, later):
        assert item["chain_id"] == "0x128"  # LEDGERMIRROR_CONTRACT_CALL_CHAIN_ID, testnet's 296 by default
        assert item["type"] == 0
    assert call["gas_price"] == "0x47"  # ContractCall under the first schedule
    assert create["gas_price"] == "0x59"  # ContractCreate: 1068 tinycents / 12 = 89
    assert later["gas_price"] == "0x8e"  # the schedule in force at its timestamp: 1704 / 12 = 142
    # the single result routes too
    one = client.get("/api/v1/contracts/0.0.5001/results/1700000000.000000020")
    assert one.status_code == 200, one.text
    assert (one.json()["gas_price"], one.json()["chain_id"], one.json()["type"]) == ("0x59", "0x128", 0)
    # hbar=false: weibars, as the Ethereum prices are then
    weibars = by_time(client, "/api/v1/contracts/results?order=asc&hbar=false")
    assert weibars["1700000000.000000010"]["gas_price"] == hex(71 * 10**10)


def test_no_schedule_and_the_older_nulls(client: TestClient, ledger: Ledger) -> None:
    ledger.load({key: value for key, value in SETUP.items() if key != "filedata"})
    plain = by_time(client, "/api/v1/contracts/results")["1700000000.000000010"]
    assert (plain["chain_id"], plain["type"], plain["gas_price"]) == ("0x128", 0, None)  # no fee schedule: null
    current = client.app.state.ctx.settings  # type: ignore[attr-defined]
    reconfigure(client, dataclasses.replace(current, contract_result_defaults=False))
    older = by_time(client, "/api/v1/contracts/results")["1700000000.000000010"]
    assert (older["chain_id"], older["type"], older["gas_price"]) == (None, None, None)
