"""A simulated stream with contract creates, calls and Ethereum transactions, imported by the real pipeline, then
read back through the contract routes: every call's log (its data the value the call wrote, in its block), its
result (by hash, and in the contract's results), the action of every call by hash and by transaction id, the
contracts' storage and bytecode, all as ``truth.json`` has them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.importer.importing import fetch, run

from ledgermirror.ledger.entity_id import long_zero_address
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.contracts import VALUE_CHANGED
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contracts")
    simulate(out, nodes=1, seconds=12, tps=30, seed=31)
    return out


@pytest.fixture
def imported(database: Prepared, client: TestClient, network: Path) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((network / "truth.json").read_text())
    stats = run(
        database.owner_url, network, book=network / "addressbook.bin", initial_balances=network / INITIAL_BALANCES
    )
    assert stats.files == truth["record_files"]["count"]
    assert truth["contracts"] and any(state["calls"] for state in truth["contracts"].values())
    return truth


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def _follow(client: TestClient, url: str, items: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    next_url: str | None = url
    while next_url is not None:
        response = client.get(next_url)
        assert response.status_code == 200, response.text
        found += response.json()[items]
        next_url = response.json()["links"]["next"]
    return found


def test_contract_routes_answer_the_simulated_values(
    database: Prepared, client: TestClient, imported: dict[str, Any]
) -> None:
    blocks = fetch(database.owner_url, "select index, hash, consensus_start, consensus_end from record_file")
    calls = 0
    for contract, state in imported["contracts"].items():
        address = long_zero_address(_num(contract))
        logs = _follow(client, f"/api/v1/contracts/{contract}/results/logs?limit=2&order=asc", "logs")
        assert len(logs) == state["calls"], contract
        assert logs == _follow(client, f"/api/v1/contracts/{address}/results/logs?limit=3&order=asc", "logs")
        written = {log["data"] for log in logs}
        for slot, value in state["storage"].items():
            if int(slot, 16):  # slot 0 is written by the constructor, every other slot by a call and its log
                assert "0x" + value in written, (contract, slot)
        for log in logs:
            assert (log["address"], log["contract_id"], log["root_contract_id"]) == (address, contract, contract)
            assert log["topics"] == ["0x" + VALUE_CHANGED.hex()]
            stamp = int(log["timestamp"].replace(".", ""))
            (block,) = [row for row in blocks if row["consensus_start"] <= stamp <= row["consensus_end"]]
            assert (log["block_number"], log["block_hash"]) == (block["index"], "0x" + block["hash"])
            (action,) = client.get(f"/api/v1/contracts/results/{log['transaction_hash']}/actions").json()[
                "actions"
            ]
            assert (action["recipient"], action["to"], action["call_type"]) == (contract, address, "CALL")
            assert (action["timestamp"], action["result_data"]) == (log["timestamp"], log["data"])
            detail = client.get(f"/api/v1/contracts/results/{log['transaction_hash']}").json()
            assert (detail["contract_id"], detail["call_result"], detail["timestamp"]) == (
                contract,
                log["data"],
                log["timestamp"],
            )
            assert [item["data"] for item in detail["logs"]] == [log["data"]]
        calls += len(logs)
        results = _follow(client, f"/api/v1/contracts/{contract}/results?limit=4", "results")
        assert len(results) == 1 + state["calls"], contract  # its creation and every call
        state_page = client.get(f"/api/v1/contracts/{contract}/state?limit=100").json()["state"]
        served = {item["slot"]: item["value"] for item in state_page}
        assert served == {"0x" + slot: "0x" + value for slot, value in state["storage"].items()}
        one = client.get(f"/api/v1/contracts/{contract}").json()
        assert one["runtime_bytecode"] == "0x" + state["runtime_bytecode"]
    every = _follow(client, "/api/v1/contracts/results/logs?limit=7", "logs")
    assert len(every) == fetch(database.owner_url, "select count(*) from contract_log")[0][0]  # token logs too
    assert len([log for log in every if log["contract_id"] in imported["contracts"]]) == calls > 0
    ethereum = {
        "0x" + row["hash"].hex() for row in fetch(database.owner_url, "select hash from ethereum_transaction")
    }
    assert any(log["transaction_hash"] in ethereum for log in every)  # Ethereum calls list under their own hash
    assert [(log["timestamp"], log["index"]) for log in every] == sorted(
        ((log["timestamp"], log["index"]) for log in every),
        key=lambda key: (int(key[0].replace(".", "")), key[1]),
        reverse=True,
    )
    newest = every[0]
    by_hash = client.get(f"/api/v1/contracts/results/logs?transaction.hash={newest['transaction_hash']}").json()
    assert newest in by_hash["logs"]
    _actions_by_transaction_id(database, client)


def _actions_by_transaction_id(database: Prepared, client: TestClient) -> None:
    rows = fetch(
        database.owner_url,
        "select t.payer_account_id, t.valid_start_ns, t.consensus_timestamp, t.entity_id from transaction t "
        "where t.type = 7 and t.result = 22 and t.nonce = 0 order by t.consensus_timestamp",
    )
    assert rows
    for row in rows:
        seconds, nanos = divmod(row["valid_start_ns"], 10**9)
        path = f"/api/v1/contracts/results/0.0.{row['payer_account_id']}-{seconds}-{nanos:09d}/actions"
        (action,) = client.get(path).json()["actions"]
        assert action["timestamp"] == format_ns(row["consensus_timestamp"])
        assert (action["caller"], action["caller_type"]) == (f"0.0.{row['payer_account_id']}", "ACCOUNT")
        assert action["recipient"] == f"0.0.{row['entity_id']}"
