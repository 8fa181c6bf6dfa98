"""Native blocks of a network whose contracts the EVM runs (``simulate --evm-contracts``: an ERC-20, an ERC-721
and a reader of HTS tokens deployed and called, their logs, actions, storage changes and bytecode what py-evm
produced) import to the tables of the same network's record stream, but for what a native block does not carry
(docs/importer.md, "What a native block does not carry"): sidecar files, signature evidence, the block columns
of ``record_file``, and a contract create's ``createdContractIDs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.importer.blocks_support import NATIVE_ABSENT, NATIVE_COLUMNS, digests, import_stream
from tests.importer.importing import fetch
from tests.support import Ledger

from ledgermirror.importer._proto import protos
from ledgermirror.ledger.transaction_codes import CONTRACTCREATEINSTANCE
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import simulate

pytestmark = pytest.mark.usefixtures("ledger")

SEED = 41
SECONDS = 8
FILES = SECONDS // 2
CREATED = ("created_contract_ids", "function_result")
"""The ``contract_result`` columns a native create cannot have: ``EvmTransactionResult`` has no created contract
ids (the reference's block transformers set none either), so ``created_contract_ids`` is empty and the stored
``ContractFunctionResult`` (``function_result``) lacks them."""
SKIP = {"record_file": NATIVE_COLUMNS, "contract_result": CREATED}
_CREATES = (
    "select consensus_timestamp, contract_id, created_contract_ids, function_result from contract_result "
    "where consensus_timestamp in (select consensus_timestamp from transaction where type = $1) order by 1"
)


@pytest.fixture(scope="module")
def evm_networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("evm-block-networks")
    for fmt in ("records", "native"):
        simulate(root / fmt, nodes=1, seconds=SECONDS, tps=20, seed=SEED, fmt=fmt, evm_contracts=True)
    return {fmt: root / fmt for fmt in ("records", "native")}


def _function_result(data: bytes) -> Any:
    return type(protos().transaction_record.TransactionRecord().contractCreateResult).FromString(data)


def test_native_blocks_of_evm_contracts_write_the_rows_of_the_record_stream(
    database: Prepared, evm_networks: dict[str, Path]
) -> None:
    url = database.owner_url
    assert import_stream(url, evm_networks["records"], "records").files == FILES
    expected = digests(url, SKIP)
    record_creates = fetch(url, _CREATES, CONTRACTCREATEINSTANCE)
    Ledger(url).reset()
    assert import_stream(url, evm_networks["native"], "blocks").files == FILES
    tables = digests(url, SKIP)
    assert tables.pop("import_status")[0] == 1
    assert set(expected) - set(tables) == NATIVE_ABSENT
    assert {name: value for name, value in tables.items() if expected[name] != value} == {}
    for table in ("contract_result", "contract_log", "contract_action", "contract_state_change", "contract"):
        assert tables[table][0] > 0, table  # what the EVM's trace data rebuilds
    native_creates = fetch(url, _CREATES, CONTRACTCREATEINSTANCE)
    assert [row["consensus_timestamp"] for row in native_creates] == [
        row["consensus_timestamp"] for row in record_creates
    ]
    created = [row for row in record_creates if row["created_contract_ids"]]
    assert len(created) == 3  # the ERC-20, the ERC-721 and the token reader
    for record_row, native_row in zip(record_creates, native_creates, strict=True):
        assert native_row["created_contract_ids"] == []
        assert record_row["created_contract_ids"] in ([], [record_row["contract_id"]])
        # the stored result is the record stream's without its createdContractIDs, and nothing else differs
        result = _function_result(record_row["function_result"])
        result.ClearField("createdContractIDs")
        assert _function_result(native_row["function_result"]) == result
