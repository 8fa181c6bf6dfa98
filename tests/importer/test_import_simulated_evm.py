"""Contracts the EVM runs, end to end: a stream simulated with ``evm_contracts`` (an ERC-20, an ERC-721 and a
contract reading HTS tokens through the token service, executed by py-evm on the simulator's own state) is
imported by the real pipeline into the embedded PostgreSQL, then ``POST /api/v1/contracts/call`` answers the
contracts' views with the simulator's values (``truth.json``: the end state, and the changes that lead to the
state at a past block), in process and from uvicorn over HTTP, and the imported results carry the EVM's gas,
output and logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient
from tests.importer.importing import fetch, run
from tests.live_server import bounded_server

from ledgermirror.api.app import create_app
from ledgermirror.ledger.entity_id import long_zero_address
from ledgermirror.ledger.evm import keccak256
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings
from ledgermirror.simulator.evm_world import EvmWorld, TokenView
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

URL = "/api/v1/contracts/call"


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evm")
    simulate(out, nodes=1, seconds=16, tps=30, seed=41, evm_contracts=True)
    return out


@pytest.fixture
def imported(database: Prepared, client: TestClient, network: Path) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((network / "truth.json").read_text())
    stats = run(
        database.owner_url, network, book=network / "addressbook.bin", initial_balances=network / INITIAL_BALANCES
    )
    assert stats.files == truth["record_files"]["count"]
    kinds = {state["kind"] for state in truth["evm_tokens"].values()}
    assert kinds == {"Erc20", "Erc721", "TokenReader"}
    return truth


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def _address(entity: str) -> str:
    return long_zero_address(_num(entity))


def _evm(truth: dict[str, Any], entity: str) -> int:
    """The EVM address contracts saw for an account: its ECDSA alias, else its long-zero address."""
    alias = truth["accounts"].get(entity, {}).get("evm_address")
    return int(alias, 16) if alias else _num(entity)


def _word(value: int) -> str:
    return format(value, "064x")


def _string(text: str) -> str:
    raw = text.encode()
    return "0x" + _word(32) + _word(len(raw)) + raw.hex().ljust((len(raw) + 31) // 32 * 64, "0")


def _call(client: TestClient | httpx.Client, to: str, signature: str, *args: int, block: str | None = None) -> str:
    data = "0x" + keccak256(signature.encode())[:4].hex() + "".join(_word(arg) for arg in args)
    body: dict[str, Any] = {"to": to, "data": data}
    if block is not None:
        body["block"] = block
    response = client.post(URL, content=json.dumps(body), headers={"content-type": "application/json"})
    assert response.status_code == 200, (signature, args, block, response.text)
    answer: str = response.json()["result"]
    return answer


def _replay(events: list[dict[str, Any]], until: int) -> tuple[dict[str, int], dict[int, str], int]:
    """Balances, ERC-721 owners and supply after the changes up to ``until`` (nanoseconds, inclusive)."""
    balances: dict[str, int] = {}
    owners: dict[int, str] = {}
    supply = 0
    for event in events:
        if event["timestamp"] > until:
            break
        if "to" not in event:  # an approval
            continue
        moved = event.get("amount", 1)
        if event["from"] is None:
            supply += moved
        else:
            balances[event["from"]] -= moved
        balances[event["to"]] = balances.get(event["to"], 0) + moved
        if "token_id" in event:
            owners[event["token_id"]] = event["to"]
    return balances, owners, supply


def _blocks(database: Prepared) -> list[Any]:
    return fetch(
        database.owner_url, "select index, consensus_start, consensus_end from record_file order by index"
    )


def _past_block(database: Prepared, events: list[dict[str, Any]]) -> Any:
    """A block after the first change and before the last, so its state differs from the latest."""
    first, last = events[0]["timestamp"], events[-1]["timestamp"]
    candidates = [b for b in _blocks(database) if first <= b["consensus_end"] < last]
    assert candidates, "the changes lie in one block: simulate longer"
    return candidates[len(candidates) // 2]


def test_erc20_views_answer_the_simulated_values(
    database: Prepared, client: TestClient, imported: dict[str, Any]
) -> None:
    (contract, state), *_ = [(c, s) for c, s in imported["evm_tokens"].items() if s["kind"] == "Erc20"]
    address = _address(contract)
    assert _call(client, address, "name()") == _string(state["name"])
    assert _call(client, address, "symbol()") == _string(state["symbol"])
    assert _call(client, address, "totalSupply()") == "0x" + _word(state["total_supply"])
    assert len(state["balances"]) >= 2
    for holder, balance in state["balances"].items():
        assert _call(client, address, "balanceOf(address)", _evm(imported, holder)) == "0x" + _word(balance)
    balances, _, supply = _replay(state["events"], 1 << 63)
    assert (balances, supply) == (state["balances"], state["total_supply"])

    block = _past_block(database, state["events"])
    then, _, _ = _replay(state["events"], block["consensus_end"])
    assert then != state["balances"]
    for holder in state["balances"]:
        answer = _call(client, address, "balanceOf(address)", _evm(imported, holder), block=str(block["index"]))
        assert answer == "0x" + _word(then.get(holder, 0)), (holder, block["index"])


def test_erc721_views_answer_the_simulated_values(
    database: Prepared, client: TestClient, imported: dict[str, Any]
) -> None:
    (contract, state), *_ = [(c, s) for c, s in imported["evm_tokens"].items() if s["kind"] == "Erc721"]
    address = _address(contract)
    assert _call(client, address, "name()") == _string(state["name"])
    assert state["owners"]
    for token_id, owner in state["owners"].items():
        assert _call(client, address, "ownerOf(uint256)", int(token_id)) == "0x" + _word(_evm(imported, owner))
        assert _call(client, address, "tokenURI(uint256)", int(token_id)) == _string(state["token_uris"][token_id])
    for holder, count in state["balances"].items():
        assert _call(client, address, "balanceOf(address)", _evm(imported, holder)) == "0x" + _word(count)
    for token_id in state["owners"]:
        approved = state["approved"].get(token_id)
        expected = "0x" + _word(_evm(imported, approved) if approved else 0)
        assert _call(client, address, "getApproved(uint256)", int(token_id)) == expected
    _approvals_at_every_block(database, client, address, imported)
    unminted = len(state["owners"]) + 1
    assert _call(client, address, "ownerOf(uint256)", unminted) == "0x" + _word(0)

    block = _past_block(database, state["events"])
    balances, owners, _ = _replay(state["events"], block["consensus_end"])
    assert owners != {int(i): o for i, o in state["owners"].items()} or balances != state["balances"]
    at = str(block["index"])
    for token_id in state["owners"]:
        owner = owners.get(int(token_id))
        expected = "0x" + _word(_evm(imported, owner) if owner else 0)
        assert _call(client, address, "ownerOf(uint256)", int(token_id), block=at) == expected, (token_id, at)
    for holder in state["balances"]:
        expected = "0x" + _word(balances.get(holder, 0))
        assert _call(client, address, "balanceOf(address)", _evm(imported, holder), block=at) == expected


def _approvals_at_every_block(database: Prepared, client: TestClient, address: str, truth: dict[str, Any]) -> None:
    """``getApproved`` of every minted token at the end of every block: the last approval, cleared by a move."""
    (events,) = [state["events"] for state in truth["evm_tokens"].values() if state["kind"] == "Erc721"]
    seen = 0
    for block in _blocks(database):
        approved: dict[int, str | None] = {}
        for event in events:
            if event["timestamp"] > block["consensus_end"]:
                break
            approved[event["token_id"]] = event.get("approved")  # a mint or transfer clears it
        for token_id, spender in approved.items():
            expected = "0x" + _word(_evm(truth, spender) if spender else 0)
            at = str(block["index"])
            assert _call(client, address, "getApproved(uint256)", token_id, block=at) == expected, (token_id, at)
            seen += spender is not None
    assert seen > 0


def test_the_token_reader_reads_hts_balances_through_the_token_service(
    client: TestClient, imported: dict[str, Any]
) -> None:
    (contract, state), *_ = [(c, s) for c, s in imported["evm_tokens"].items() if s["kind"] == "TokenReader"]
    assert state["events"]
    for token, balances in imported["token_balances"].items():
        if imported["tokens"][token]["type"] != "FUNGIBLE_COMMON" or imported["tokens"][token]["deleted"]:
            continue
        for holder, balance in list(balances.items())[:3]:
            answer = _call(client, _address(contract), "balanceIn(address,address)", _num(token), _num(holder))
            assert answer == "0x" + _word(balance), (token, holder)


def test_imported_results_are_what_the_evm_produced(
    database: Prepared, client: TestClient, imported: dict[str, Any], network: Path
) -> None:
    """Every result of these contracts as imported: the gas used and output the EVM gave, re-checked by running
    the same transactions again on a fresh EVM world in stream order; the logs' topics and the state served."""
    nums = [_num(contract) for contract in imported["evm_tokens"]]
    rows = fetch(
        database.owner_url,
        "select consensus_timestamp, contract_id, gas_used, gas_limit, call_result, function_parameters, "
        "sender_id, transaction_result, error_message from contract_result where contract_id = any($1::bigint[]) "
        "order by consensus_timestamp",
        nums,
    )
    assert len(rows) == sum(1 + imported["contracts"][c]["calls"] for c in imported["evm_tokens"])
    initcode = {_num(c): bytes.fromhex(imported["contracts"][c]["initcode"]) for c in imported["evm_tokens"]}
    created = {imported["contracts"][c]["created_timestamp"] for c in imported["evm_tokens"]}
    reads = {
        event["timestamp"]: event
        for state in imported["evm_tokens"].values()
        for event in state["events"]
        if "balance" in event
    }
    answering: list[dict[str, Any]] = []
    replay = EvmWorld(tokens=_token_views(imported, answering), chain_id=298)
    failed = 0
    for row in rows:
        creation = row["consensus_timestamp"] in created
        answering[:] = [reads[row["consensus_timestamp"]]] if row["consensus_timestamp"] in reads else []
        execution = replay.execute(
            sender=_evm(imported, f"0.0.{row['sender_id']}").to_bytes(20, "big"),
            to=None if creation else bytes(12) + row["contract_id"].to_bytes(8, "big"),
            data=initcode[row["contract_id"]] if creation else bytes(row["function_parameters"]),
            gas=row["gas_limit"],
            block_number=0,
            timestamp=row["consensus_timestamp"] // 1_000_000_000,
            create_at=bytes(12) + row["contract_id"].to_bytes(8, "big") if creation else None,
        )
        assert row["gas_used"] == execution.gas_used, row
        if row["transaction_result"] != 22:  # CONTRACT_REVERT_EXECUTED: the revert data as the error message
            assert (row["transaction_result"], execution.reverted) == (33, True)
            assert row["error_message"] == "0x" + execution.output.hex()
            failed += 1
            continue
        assert execution.success and bytes(row["call_result"]) == execution.output, row
        stamp = row["consensus_timestamp"]
        contract = f"0.0.{row['contract_id']}"
        served = client.get(f"/api/v1/contracts/{contract}/results/{stamp // 10**9}.{stamp % 10**9:09d}").json()
        assert (served["gas_used"], served["call_result"]) == (execution.gas_used, "0x" + execution.output.hex())
        if stamp in reads:  # the reader's call of the token's address: a SYSTEM action
            actions = client.get(f"/api/v1/contracts/results/{served['hash']}/actions")
            top, inner = actions.json()["actions"]
            assert (top["call_depth"], inner["call_depth"], inner["call_type"]) == (0, 1, "SYSTEM")
            assert inner["to"] == _address(reads[stamp]["token"])
    assert failed > 0
    transfer = "0x" + keccak256(b"Transfer(address,address,uint256)").hex()
    approval = "0x" + keccak256(b"Approval(address,address,uint256)").hex()
    for contract, state in imported["evm_tokens"].items():
        if state["kind"] == "TokenReader":
            continue
        logs = client.get(f"/api/v1/contracts/{contract}/results/logs?limit=100&order=asc").json()["logs"]
        topics = [log["topics"][0] for log in logs]
        assert topics.count(transfer) == len([event for event in state["events"] if "to" in event])
        assert topics.count(approval) == len([event for event in state["events"] if "approved" in event])
        served = client.get(f"/api/v1/contracts/{contract}/state?limit=100").json()["state"]
        # a slot set back to zero stays listed with a zero value (the mirror keeps its row); the EVM has none
        assert {item["slot"]: item["value"] for item in served if int(item["value"], 16)} == {
            "0x" + slot: "0x" + value for slot, value in imported["contracts"][contract]["storage"].items()
        }


def _token_views(imported: dict[str, Any], answering: list[dict[str, Any]]) -> Any:
    """The HTS tokens for the replay: each read answered as the stream recorded it at that time."""

    def view(num: int) -> TokenView | None:
        token = imported["tokens"].get(f"0.0.{num}")
        if token is None:
            return None
        balances = {_num(event["owner"]): event["balance"] for event in answering if _num(event["token"]) == num}
        fungible = token["type"] == "FUNGIBLE_COMMON"
        return TokenView(
            token["name"], token["symbol"], token["decimals"], 0, fungible, lambda o: balances.get(o, 0)
        )

    return view


def test_a_served_api_answers_the_same(database: Prepared, imported: dict[str, Any]) -> None:
    """The same views over HTTP from uvicorn (the services' own configuration, EVM worker processes)."""
    erc20, erc721 = (
        next((c, s) for c, s in imported["evm_tokens"].items() if s["kind"] == kind)
        for kind in ("Erc20", "Erc721")
    )
    app = create_app(Settings(), database.api_url)
    with (
        bounded_server(app, Settings()) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
    ):
        assert _call(http, _address(erc20[0]), "totalSupply()") == "0x" + _word(erc20[1]["total_supply"])
        for holder, balance in erc20[1]["balances"].items():
            assert _call(http, _address(erc20[0]), "balanceOf(address)", _evm(imported, holder)) == "0x" + _word(
                balance
            )
        for token_id, owner in erc721[1]["owners"].items():
            expected = "0x" + _word(_evm(imported, owner))
            assert _call(http, _address(erc721[0]), "ownerOf(uint256)", int(token_id)) == expected
