"""A simulated network through rows_of_file and write_batch: the imported state is the simulator's truth."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests.importer.handlers.items import fetch
from tests.support import Ledger

from ledgermirror.importer.handlers.balances import read_balance_snapshot, seed_balances
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import write_batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.simulator.run import simulate


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("net")
    simulate(out, nodes=1, seconds=10, tps=40, seed=5)
    return out


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def import_network(url: str, out: Path, truth: dict[str, Any]) -> None:
    folder = next((out / "recordstreams").iterdir())
    files = sorted(path for path in folder.iterdir() if path.name.endswith(".rcd.gz"))
    snapshot = read_balance_snapshot((out / truth["network"]["initial_balances"]).read_bytes())

    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            await seed_balances(conn, snapshot)
            for path in files:
                batch = Batch()
                rows_of_file(read_record_file(path.name, path.read_bytes()), batch)
                async with conn.transaction():
                    await write_batch(conn, batch)
        finally:
            await conn.close()

    asyncio.run(main())


def test_imported_state_is_the_truth(ledger: Ledger, network: Path) -> None:
    truth = json.loads((network / "truth.json").read_text())
    import_network(ledger.url, network, truth)
    balances = {row["id"]: row["balance"] for row in fetch(ledger.url, "select id, balance from entity")}
    expected = {_num(account): balance for account, balance in truth["balances"].items()}
    assert {account: balances.get(account) for account in expected} == expected
    token_accounts = fetch(ledger.url, "select token_id, account_id, balance from token_account")
    token_balances = {(row["token_id"], row["account_id"]): row["balance"] for row in token_accounts}
    expected_tokens = {
        (_num(token), _num(account)): balance
        for token, accounts in truth["token_balances"].items()
        for account, balance in accounts.items()
    }
    assert {key: token_balances.get(key) for key in expected_tokens} == expected_tokens
    entities = {row["id"]: row for row in fetch(ledger.url, "select * from entity")}
    for account, state in truth["accounts"].items():
        row = entities[_num(account)]
        assert (row["deleted"], row["memo"], row["created_timestamp"]) == (
            state["deleted"], state["memo"], state["created_timestamp"],
        ), account  # fmt: skip
        if state["key"]:
            assert row["key"].hex() == state["key"], account
        if state.get("ethereum_nonce") is not None:
            assert row["ethereum_nonce"] == state["ethereum_nonce"], account
    allowances = {
        (row["owner"], row["spender"]): (row["amount_granted"], row["amount"])
        for row in fetch(ledger.url, "select * from crypto_allowance")
    }
    for allowance in truth["allowances"]["crypto"]:
        key = (_num(allowance["owner"]), _num(allowance["spender"]))
        assert allowances[key] == (allowance["amount_granted"], allowance["amount"])
    by_type = fetch(ledger.url, "select type, count(*) from transaction group by type")
    assert sum(row["count"] for row in by_type) == truth["transactions"]["count"]
