"""POST /api/v1/contracts/call over the ``small`` data set (its own embedded PostgreSQL, loaded by the dataset
generator): the contracts that run compiled Solidity (``dataset/evm_code.py``) answer
their views with what the data set's rows say: an ERC-20's name, symbol, total supply and the creator's balance
(the creating payer of its ``contract_result``, the supply from its ``Transfer`` log), a ``CallTarget``'s owner and
stored values, now and at the block after their creation (storage rebuilt from ``contract_state_change``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from eth_abi.abi import decode
from starlette.testclient import TestClient
from tests.contracts.simulator_subset import DATASET_TARGET, dataset_subset

from ledgermirror.api.app import create_app
from ledgermirror.dataset import evm_code
from ledgermirror.dataset.load import load
from ledgermirror.db.migrate import migrate
from ledgermirror.ledger.evm import keccak256
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

URL = "/api/v1/contracts/call"
COMPILED = """select c.id, r.payer_account_id, r.consensus_timestamp,
  (select index from record_file f where r.consensus_timestamp between f.consensus_start and f.consensus_end)
from contract c join contract_result r on r.contract_id = c.id and r.created_contract_ids = array[c.id]
where c.runtime_bytecode = $1 order by c.id"""
TRANSFER_LOG = """select topic0, topic1, topic2, data from contract_log
where contract_id = $1 and consensus_timestamp = $2"""


def selector(signature: str) -> str:
    return keccak256(signature.encode())[:4].hex()


def address(num: int) -> str:
    return format(num, "064x")


async def _load(owner_url: str) -> dict[str, Any]:
    conn = await asyncpg.connect(owner_url)
    try:
        await migrate(conn)
        await load(conn, "small", seed=1)
        tokens = await conn.fetch(COMPILED, evm_code.runtime(evm_code.ERC20))
        targets = await conn.fetch(COMPILED, evm_code.runtime(evm_code.CALL_TARGET))
        logs = {row[0]: await conn.fetch(TRANSFER_LOG, row[0], row[2]) for row in tokens}
        last_block = await conn.fetchval("select max(index) from record_file")
        contracts = await conn.fetchval("select count(*) from contract")
        return {"tokens": tokens, "targets": targets, "logs": logs, "last": last_block, "contracts": contracts}
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    prepared = prepare(Settings(data_dir=Path(tmp_path_factory.mktemp("small-calls"))), durable=False)
    try:
        facts = asyncio.run(_load(prepared.owner_url))
        with TestClient(create_app(Settings(), prepared.api_url), raise_server_exceptions=False) as client:
            yield client, facts
    finally:
        prepared.stop()


def call(client: TestClient, contract: int, data: str, block: str | int = "latest") -> bytes:
    body = {"to": "0x" + format(contract, "040x"), "data": "0x" + data, "block": str(block)}
    response = client.post(URL, json=body)
    assert response.status_code == 200, response.text
    return bytes.fromhex(response.json()["result"][2:])


def test_a_share_of_the_contracts_runs_each_compiled_contract(loaded: tuple[TestClient, dict[str, Any]]) -> None:
    _, facts = loaded
    assert facts["contracts"] == 8  # small: indexes 2 and 6 are ERC-20s, 3 and 7 CallTargets
    assert len(facts["tokens"]) == 2 and len(facts["targets"]) == 2


def test_erc20_views_answer_what_the_rows_say(loaded: tuple[TestClient, dict[str, Any]]) -> None:
    client, facts = loaded
    for contract, creator, _, _ in facts["tokens"]:
        num = contract & (2**38 - 1)
        [log] = facts["logs"][contract]  # the constructor's Transfer(0, creator, supply)
        assert log["topic0"] == keccak256(b"Transfer(address,address,uint256)")
        assert log["topic1"] == b"" and int.from_bytes(log["topic2"], "big") == creator
        supply = int.from_bytes(log["data"], "big")
        assert supply > 0
        assert decode(["uint256"], call(client, num, selector("totalSupply()")))[0] == supply
        assert (
            decode(["uint256"], call(client, num, selector("balanceOf(address)") + address(creator)))[0] == supply
        )
        assert (
            decode(["uint256"], call(client, num, selector("balanceOf(address)") + address(creator + 1)))[0] == 0
        )
        assert decode(["string"], call(client, num, selector("name()")))[0] == f"Token {num}"
        assert decode(["string"], call(client, num, selector("symbol()")))[0] == f"T{num}"
        assert decode(["uint8"], call(client, num, selector("decimals()")))[0] == 8


def test_erc20_transfer_from_the_creator_runs_and_from_another_reverts(
    loaded: tuple[TestClient, dict[str, Any]],
) -> None:
    client, facts = loaded
    contract, creator, _, _ = facts["tokens"][0]
    num = contract & (2**38 - 1)
    data = "0x" + selector("transfer(address,uint256)") + address(creator + 1) + format(5, "064x")
    to = "0x" + format(num, "040x")
    sent = client.post(URL, json={"to": to, "data": data, "from": "0x" + format(creator, "040x")})
    assert sent.status_code == 200, sent.text
    assert decode(["bool"], bytes.fromhex(sent.json()["result"][2:]))[0] is True
    refused = client.post(URL, json={"to": to, "data": data, "from": "0x" + format(creator + 1, "040x")})
    assert refused.status_code == 400
    assert "insufficient balance" in refused.text


def test_call_target_views_answer_what_the_rows_say(loaded: tuple[TestClient, dict[str, Any]]) -> None:
    client, facts = loaded
    for contract, creator, _, block in facts["targets"]:
        num = contract & (2**38 - 1)
        for at in ("latest", block, facts["last"]):  # the creation's block: storage from contract_state_change
            assert decode(["uint256"], call(client, num, selector("values(uint256)") + format(7, "064x"), at)) == (
                49,
            )
            assert int.from_bytes(call(client, num, selector("owner()"), at), "big") == creator
            assert decode(["string"], call(client, num, selector("returnStorageData()"), at))[0] == "test"
            assert decode(["uint256"], call(client, num, selector("counter()"), at))[0] == 0
        assert decode(["uint256"], call(client, num, selector("loop(uint256)") + format(100, "064x")))[0] == 4950


def test_the_shipped_bytecode_is_the_compiled_solidity() -> None:
    compiled = json.loads((Path(__file__).resolve().parents[1] / "contracts" / "compiled.json").read_text())
    shipped = json.loads(DATASET_TARGET.read_text())
    assert shipped == dataset_subset(compiled), "run python tests/contracts/simulator_subset.py after recompiling"
    assert evm_code.runtime(evm_code.ERC20).hex() == compiled["contracts"]["Erc20"]["runtime"]
