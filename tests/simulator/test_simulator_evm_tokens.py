"""Contracts the EVM runs in the simulator (``evm_contracts``): the shipped bytecode is the compiled Solidity of
tests/contracts; the records and sidecars carry what py-evm produced and agree with ``truth.json``; the same
seed gives the same bytes; the default mix has none of them. And :class:`EvmWorld` itself: creations at the
named long-zero address, reverts that change nothing, the token service's views."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from tests.contracts.simulator_subset import TARGET as SUBSET
from tests.contracts.simulator_subset import subset
from tests.simulator.reading import Item, items_of, node_folders, verify_all

from ledgermirror.importer.sidecar_file import read_sidecar_file
from ledgermirror.ledger.evm import keccak256, log_bloom
from ledgermirror.simulator import evm_tokens
from ledgermirror.simulator.evm_world import EvmWorld, TokenView, long_zero, selector
from ledgermirror.simulator.run import simulate

CONTRACTS = Path(__file__).resolve().parents[1] / "contracts"
TRANSFER = keccak256(b"Transfer(address,address,uint256)")


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evm")
    simulate(out, nodes=1, seconds=12, tps=30, seed=7, evm_contracts=True)
    return out


@pytest.fixture(scope="module")
def truth(network: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((network / "truth.json").read_text())
    return document


@pytest.fixture(scope="module")
def items(network: Path) -> list[Item]:
    return items_of(verify_all(network))


@pytest.fixture(scope="module")
def sidecars(network: Path) -> dict[int, list[Any]]:
    found: dict[int, list[Any]] = defaultdict(list)
    for path in sorted((node_folders(network)[0] / "sidecar").iterdir()):
        for record in read_sidecar_file(path.name, path.read_bytes()).records:
            stamp = record.consensus_timestamp.seconds * 1_000_000_000 + record.consensus_timestamp.nanos
            found[stamp].append(record)
    return found


def test_the_shipped_bytecode_is_the_compiled_solidity() -> None:
    shipped = json.loads(SUBSET.read_text())
    expected = subset(json.loads((CONTRACTS / "compiled.json").read_text()))
    assert shipped == expected, "run python tests/contracts/simulator_subset.py after recompiling"
    assert evm_tokens.compiled() == shipped["contracts"]
    assert all((CONTRACTS / code["source"]).is_file() for code in shipped["contracts"].values())


def test_records_and_sidecars_are_what_the_evm_produced(
    truth: dict[str, Any], items: list[Item], sidecars: dict[int, list[Any]]
) -> None:
    tokens = truth["evm_tokens"]
    assert {state["kind"] for state in tokens.values()} == {"Erc20", "Erc721", "TokenReader"}
    nums = {int(contract.rsplit(".", 1)[1]) for contract in tokens}
    results = [
        (item, item.record.contractCreateResult if item.body_name == "contractCreateInstance" else
         item.record.contractCallResult)
        for item in items
        if item.record.receipt.contractID.contractNum in nums
    ]  # fmt: skip
    assert len(results) == sum(1 + truth["contracts"][c]["calls"] for c in tokens)
    storage: dict[str, dict[str, str]] = defaultdict(dict)
    transfers: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    reverted = 0
    for item, result in results:
        contract = f"0.0.{result.contractID.contractNum}"
        assert 21_000 < result.gasUsed < result.gas
        if item.record.receipt.status != 22:  # a transfer above the balance
            assert item.record.receipt.status == 33  # CONTRACT_REVERT_EXECUTED
            reason = bytes.fromhex(result.errorMessage.removeprefix("0x"))
            assert reason[:4] == selector("Error(string)") and b"insufficient balance" in reason
            assert not result.logInfo and not result.contractCallResult
            reverted += 1
        kinds = {record.WhichOneof("sidecar_records") for record in sidecars[item.consensus_timestamp]}
        assert "actions" in kinds
        bloom = 0
        for log in result.logInfo:
            address = long_zero(log.contractID.contractNum)
            assert log.bloom == log_bloom(address, list(log.topic))
            bloom |= int.from_bytes(log.bloom, "big")
            if log.topic[0] == TRANSFER:
                sender, receiver = (int.from_bytes(topic, "big") for topic in log.topic[1:3])
                value = int.from_bytes(log.data or log.topic[3], "big")
                transfers[contract].append((sender, receiver, value))
        assert int.from_bytes(result.bloom or bytes(256), "big") == bloom
        for record in sidecars[item.consensus_timestamp]:
            if record.WhichOneof("sidecar_records") == "state_changes":
                _fold_writes(record, storage)
            if record.WhichOneof("sidecar_records") == "bytecode":
                assert record.bytecode.runtime_bytecode == result.contractCallResult
                assert record.bytecode.runtime_bytecode.hex() == truth["contracts"][contract]["runtime_bytecode"]
                assert result.evm_address.value == long_zero(result.contractID.contractNum)
    assert reverted > 0
    ecdsa = {num for num, account in truth["accounts"].items() if account["evm_address"]}
    by_ethereum = [item for item, _ in results if item.body_name == "ethereumTransaction"]
    assert by_ethereum and all(f"0.0.{item.record.contractCallResult.sender_id.accountNum}" in ecdsa
                               for item in by_ethereum)  # fmt: skip
    for contract, state in tokens.items():
        live = {slot: value for slot, value in storage[contract].items() if int(value, 16)}
        assert live == truth["contracts"][contract]["storage"], contract
        if state["kind"] == "TokenReader":
            continue
        expected = [
            (_evm(truth, e["from"]) if e["from"] else 0, _evm(truth, e["to"]), e.get("amount", e.get("token_id")))
            for e in state["events"]
            if "to" in e
        ]  # fmt: skip
        assert transfers[contract] == expected


def _evm(truth: dict[str, Any], entity: str) -> int:
    """The EVM address contracts saw for an account: its ECDSA alias, else its long-zero address."""
    alias = truth["accounts"][entity]["evm_address"]
    return int(alias, 16) if alias else int(entity.rsplit(".", 1)[1])


def _fold_writes(record: Any, storage: dict[str, dict[str, str]]) -> None:
    """The slots a state-change sidecar record wrote, into contract → slot → value (32-byte hex)."""
    for change in record.state_changes.contract_state_changes:
        for slot in change.storage_changes:
            if slot.HasField("value_written"):
                key = f"0.0.{change.contract_id.contractNum}"
                value = bytes(slot.value_written.value).rjust(32, b"\0").hex()
                storage[key][bytes(slot.slot).rjust(32, b"\0").hex()] = value


def test_the_token_reader_asks_the_token_service(
    truth: dict[str, Any], items: list[Item], sidecars: dict[int, list[Any]]
) -> None:
    (reader, state), *_ = [(c, s) for c, s in truth["evm_tokens"].items() if s["kind"] == "TokenReader"]
    assert state["events"]
    by_time = {item.consensus_timestamp: item for item in items}
    for event in state["events"]:
        item = by_time[event["timestamp"]]
        assert item.record.contractCallResult.contractCallResult == event["balance"].to_bytes(32, "big")
        (actions,) = [r for r in sidecars[event["timestamp"]] if r.WhichOneof("sidecar_records") == "actions"]
        top, inner = actions.actions.contract_actions
        assert (top.call_depth, top.recipient_contract.contractNum) == (0, int(reader.rsplit(".", 1)[1]))
        assert (inner.call_depth, inner.call_type) == (1, 4)  # SYSTEM: the token's address
        assert inner.recipient_contract.contractNum == int(event["token"].rsplit(".", 1)[1])
        assert inner.output == event["balance"].to_bytes(32, "big")


def test_the_same_seed_gives_the_same_bytes_and_the_default_mix_has_none(tmp_path: Path, network: Path) -> None:
    again = tmp_path / "again"
    simulate(again, nodes=1, seconds=12, tps=30, seed=7, evm_contracts=True)
    assert (again / "truth.json").read_bytes() == (network / "truth.json").read_bytes()
    first, second = node_folders(network)[0], node_folders(again)[0]
    for path in sorted(first.rglob("*.rcd*")):
        assert (second / path.relative_to(first)).read_bytes() == path.read_bytes(), path.name
    plain = tmp_path / "plain"
    simulate(plain, nodes=1, seconds=4, tps=30, seed=7)
    document = json.loads((plain / "truth.json").read_text())
    assert "evm_tokens" not in document and "evm_contracts" not in document["network"]


def test_the_cli_option(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", "--out", str(tmp_path), "--nodes", "1",
         "--seconds", "8", "--tps", "30", "--evm-contracts"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["network"]["evm_contracts"] is True
    assert {state["kind"] for state in truth["evm_tokens"].values()} == {"Erc20", "Erc721", "TokenReader"}


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _world() -> EvmWorld:
    token = TokenView("Gold", "GLD", 2, 500, True, lambda owner: {1001: 123}.get(owner, 0))
    return EvmWorld(tokens=lambda num: token if num == 1500 else None, chain_id=298)


def _deploy(world: EvmWorld, kind: str, at: int, arguments: bytes = b"") -> None:
    code = bytes.fromhex(evm_tokens.compiled()[kind]["bytecode"]) + arguments
    done = world.execute(
        sender=long_zero(1001),
        to=None,
        data=code,
        gas=3_000_000,
        block_number=1,
        timestamp=1,
        create_at=long_zero(at),
    )
    assert done.success and done.output.hex() == evm_tokens.compiled()[kind]["runtime"]


def test_the_world_creates_at_the_named_address_and_a_revert_changes_nothing() -> None:
    world = _world()
    _deploy(world, "Erc20", 2000, evm_tokens.encode("Coin", "CN", 1000))
    balance_slot = int.from_bytes(keccak256(_word(1001) + _word(3)), "big")  # balanceOf: slot 3
    assert world.storage_at(long_zero(2000), balance_slot) == 1000
    too_much = selector("transfer(address,uint256)") + evm_tokens.encode(1002, 1001)
    refused = world.execute(sender=long_zero(1001), to=long_zero(2000), data=too_much, gas=100_000,
                            block_number=2, timestamp=2)  # fmt: skip
    assert (refused.success, refused.reverted) == (False, True)
    assert refused.output[:4] == selector("Error(string)") and b"insufficient balance" in refused.output
    assert all(access.written is None for access in refused.storage[long_zero(2000)])
    assert refused.logs == () and world.storage_at(long_zero(2000), balance_slot) == 1000
    moved = world.execute(sender=long_zero(1001), to=long_zero(2000), data=too_much[:36] + _word(400),
                          gas=100_000, block_number=2, timestamp=2)  # fmt: skip
    assert moved.success and moved.output == _word(1)
    written = {a.slot: (a.read, a.written) for a in moved.storage[long_zero(2000)]}
    assert written[_word(balance_slot)] == (_word(1000), _word(600))


def test_the_world_answers_the_token_service() -> None:
    world = _world()
    _deploy(world, "TokenReader", 2001)

    def ask(signature: str, *arguments: int) -> Any:
        data = selector(signature) + b"".join(_word(a) for a in arguments)
        return world.execute(sender=long_zero(1001), to=long_zero(2001), data=data, gas=200_000,
                             block_number=3, timestamp=3)  # fmt: skip

    assert ask("balanceIn(address,address)", 1500, 1001).output == _word(123)
    assert ask("totalSupplyOf(address)", 1500).output == _word(500)
    assert ask("decimalsOf(address)", 1500).output == _word(2)
    assert ask("isTokenAt(address)", 1500).output == _word(1)
    assert ask("isTokenAt(address)", 1501).output == _word(0)
    assert ask("tokenTypeOf(address)", 1500).output == _word(0)
    name = ask("nameOf(address)", 1500)
    assert name.output == _word(32) + _word(4) + b"Gold".ljust(32, b"\0")
    assert [(f.depth, f.system) for f in name.frames] == [(0, False), (1, True)]
    assert not ask("balanceIn(address,address)", 1501, 1001).success  # no token there: no answer
