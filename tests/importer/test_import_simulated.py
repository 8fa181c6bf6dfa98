"""A simulated network (``ledgermirror.simulator``) through the whole pipeline: every file verified against
its nodes' signatures (with the 0.0.102 updates the stream makes), imported in batches, the balances of its
truth reached; in both layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.importer.importing import fetch, run
from tests.support import Ledger

from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

pytestmark = pytest.mark.usefixtures("ledger")


@pytest.fixture(scope="module")
def networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    found = {}
    for layout in ("account", "node-id"):
        out = tmp_path_factory.mktemp(layout)
        simulate(out, nodes=2, seconds=12, tps=30, seed=9, layout=layout)
        found[layout] = out
    return found


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def _balances_match(url: str, truth: dict[str, Any]) -> None:
    balances = {row["id"]: row["balance"] for row in fetch(url, "select id, balance from entity")}
    expected = {_num(account): balance for account, balance in truth["balances"].items()}
    assert {account: balances.get(account) for account in expected} == expected


def _contracts_match(url: str, truth: dict[str, Any]) -> None:
    """The contracts' runtime bytecode and storage (from the verified sidecars) and one result per create and
    call, each call with its log and its actions."""
    contracts = truth["contracts"]
    assert contracts, "the simulated run deploys contracts"
    bytecode = {row["id"]: row["runtime_bytecode"] for row in fetch(url, "select * from contract")}
    storage: dict[int, dict[str, str]] = {}
    for row in fetch(url, "select contract_id, slot, value from contract_state"):
        # The value is stored as the sidecar wrote it (the reference's ContractState); as a uint256 (what REST
        # shows) it is the 32-byte word of truth.json.
        storage.setdefault(row["contract_id"], {})[row["slot"].hex()] = row["value"].rjust(32, b"\0").hex()
    results = {row["contract_id"]: row["count"] for row in fetch(url, _PER_CONTRACT.format("contract_result"))}
    logs = {row["contract_id"]: row["count"] for row in fetch(url, _PER_CONTRACT.format("contract_log"))}
    for contract, state in contracts.items():
        num = _num(contract)
        assert bytecode[num].hex() == state["runtime_bytecode"], contract
        assert storage.get(num, {}) == state["storage"], contract
        assert results[num] == 1 + state["calls"], contract
        assert logs.get(num, 0) == state["calls"], contract
    calls = sum(state["calls"] for state in contracts.values())
    assert fetch(url, "select count(*) from contract_action")[0][0] == calls
    changes = fetch(url, "select count(distinct consensus_timestamp) from contract_state_change")[0][0]
    assert changes == len(contracts) + calls
    ethereum = fetch(url, "select count(*) from ethereum_transaction")[0][0]
    assert ethereum == fetch(url, "select count(*) from transaction where type = 50")[0][0] > 0


_PER_CONTRACT = "select contract_id, count(*) from {} group by contract_id"


def _schedule_signatures_match(url: str, truth: dict[str, Any]) -> None:
    """Every schedule's signatures, read from its transactions' signature maps (parsed only when a handler
    asks: the import's process parses each body alone, ``importer/items_read_ahead.py``)."""
    assert truth["schedules"]
    rows = fetch(url, "select entity_id, public_key_prefix, signature from transaction_signature")
    stored: dict[int, set[tuple[str, str]]] = {}
    for row in rows:
        stored.setdefault(row["entity_id"], set()).add(
            (bytes(row["public_key_prefix"]).hex(), bytes(row["signature"]).hex())
        )
    for schedule, state in truth["schedules"].items():
        expected = {(s["public_key_prefix"], s["signature"]) for s in state["signatures"]}
        assert stored.get(_num(schedule)) == expected, schedule


@pytest.mark.parametrize("layout", ["account", "node-id"])
def test_a_simulated_network_imports_to_its_truth(
    database: Prepared, ledger: Ledger, networks: dict[str, Path], layout: str
) -> None:
    out = networks[layout]
    truth = json.loads((out / "truth.json").read_text())
    stats = run(
        database.owner_url,
        out,
        book=out / "addressbook.bin",
        initial_balances=out / INITIAL_BALANCES,
        files_per_transaction=4,
    )
    files = fetch(database.owner_url, "select index from record_file order by index")
    assert stats.files == len(files) == 6
    assert [row["index"] for row in files] == list(range(files[0]["index"], files[0]["index"] + 6))
    _balances_match(database.owner_url, truth)
    _contracts_match(database.owner_url, truth)
    _schedule_signatures_match(database.owner_url, truth)
    books = fetch(database.owner_url, "select start_consensus_timestamp from address_book where file_id = 102")
    assert len(books) >= 3  # the bootstrap book, then the stream's own (the first and the mid-run revision)
    assert fetch(database.owner_url, "select count(*) from node_stake")[0][0] == 2  # then weighted by stake
    assert run(database.owner_url, out, book=None).files == 0
