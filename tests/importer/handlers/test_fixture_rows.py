"""The reference's v6 fixtures through rows_of_file and write_batch (the rows the reference's tests expect)."""

from __future__ import annotations

import pytest
from tests.importer.fixtures import FIRST, RECORDS, SECOND, record_bytes, sidecar_bytes
from tests.importer.handlers.items import fetch, write
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.handlers.item import item_of
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.importer.sidecar_file import read_sidecar_file

pytestmark = pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")


def test_fixture_files_write_their_rows(ledger: Ledger) -> None:
    batch = Batch()
    for stamp in (FIRST, SECOND):
        rows_of_file(read_record_file(f"{stamp}.rcd.gz", record_bytes(stamp)), batch)
    counts = write(ledger.url, batch)
    assert counts["transaction"] == 3
    assert counts["transaction_hash"] == 3
    assert counts["file_data"] == 1
    rows = fetch(
        ledger.url,
        "select consensus_timestamp, type, result, payer_account_id, entity_id, charged_tx_fee, nonce,"
        " parent_consensus_timestamp, index from transaction order by consensus_timestamp",
    )
    assert [(row["type"], row["result"], row["payer_account_id"], row["index"]) for row in rows] == [
        (19, 22, 57, 0),
        (7, 22, 2, 0),
        (8, 22, 2, 1),
    ]
    assert rows[0]["charged_tx_fee"] == 0
    assert rows[1]["charged_tx_fee"] == 56493422
    assert rows[2]["parent_consensus_timestamp"] == rows[1]["consensus_timestamp"]
    assert rows[2]["nonce"] == 1
    data = fetch(ledger.url, "select entity_id, length(file_data) as size, transaction_type from file_data")
    assert data == [{"entity_id": 121, "size": 76, "transaction_type": 19}]
    # The update of a file the database never saw creates its entity (no created_timestamp); the child
    # ContractCreate creates contract 0.0.1003.
    entity = fetch(ledger.url, "select id, type, created_timestamp, deleted, memo from entity order by id")
    assert entity == [
        {"id": 121, "type": "FILE", "created_timestamp": None, "deleted": False, "memo": ""},
        {"id": 1003, "type": "CONTRACT", "created_timestamp": rows[2]["consensus_timestamp"], "deleted": False,
         "memo": "cellar door"},
    ]  # fmt: skip
    assert [row["entity_id"] for row in rows] == [121, 1002, 1003]
    contract = fetch(ledger.url, "select evm_address, max_automatic_token_associations, balance, key from entity"
                     " where id = 1003")[0]  # fmt: skip
    assert contract["evm_address"] == bytes(18) + b"\x03\xeb"
    assert contract["max_automatic_token_associations"] == 10
    assert contract["balance"] == 0
    create = item_of(read_record_file(f"{SECOND}.rcd.gz", record_bytes(SECOND)).items[1], 1)
    assert contract["key"] == create.body.contractCreateInstance.adminKey.SerializeToString()
    assert fetch(ledger.url, "select id, file_id, initcode from contract") == [
        {"id": 1003, "file_id": None, "initcode": None}
    ]
    assert fetch(ledger.url, "select count(*) from crypto_transfer") == [{"count": 2}]


def test_fixture_sidecar_writes_contract_rows(ledger: Ledger) -> None:
    """The second v6 file with its sidecar: a ContractCall of 0.0.1002 that creates 0.0.1003 (child create):
    a result for both, the state changes of both contracts, the child's runtime bytecode."""
    name = f"{SECOND}_01.rcd.gz"
    batch = Batch()
    record = read_record_file(f"{SECOND}.rcd.gz", record_bytes(SECOND))
    rows_of_file(record, batch, [read_sidecar_file(name, sidecar_bytes(SECOND))])
    write(ledger.url, batch)
    call, create = (item.consensus_timestamp for item in record.items)
    results = fetch(
        ledger.url,
        "select consensus_timestamp, contract_id, gas_used, created_contract_ids, transaction_index"
        " from contract_result order by consensus_timestamp",
    )
    assert [(row["consensus_timestamp"], row["contract_id"], row["transaction_index"]) for row in results] == [
        (call, 1002, 0),
        (create, 1003, 1),
    ]
    assert results[0]["gas_used"] == 800_000 and 1003 in results[0]["created_contract_ids"]
    changes = fetch(ledger.url, "select distinct consensus_timestamp, contract_id from contract_state_change")
    assert {(row["consensus_timestamp"], row["contract_id"]) for row in changes} == {(call, 1002), (call, 1003)}
    state = fetch(ledger.url, "select contract_id, length(slot) as size, created_timestamp from contract_state")
    assert state and all(row["size"] == 32 and row["created_timestamp"] == call for row in state)
    contracts = fetch(ledger.url, "select id, runtime_bytecode from contract where runtime_bytecode is not null")
    assert [row["id"] for row in contracts] == [1003] and len(contracts[0]["runtime_bytecode"]) > 0


def test_fixture_sidecar_file_row_and_contract_links(ledger: Ledger) -> None:
    """The second v6 file's sidecar as a ``sidecar_file`` row (B.5 values); the call and its child create
    linked to their contracts and payer in ``contract_transaction``, hashed in ``contract_transaction_hash``;
    no action sidecar before HAPI 0.69: no ``gas_consumed``."""
    name = f"{SECOND}_01.rcd.gz"
    batch = Batch()
    record = read_record_file(f"{SECOND}.rcd.gz", record_bytes(SECOND))
    rows_of_file(record, batch, [read_sidecar_file(name, sidecar_bytes(SECOND))])
    write(ledger.url, batch)
    assert fetch(ledger.url, "select * from sidecar_file") == [
        {
            "bytes": None,
            "count": 2,
            "consensus_end": 1657701971304284004,
            "hash_algorithm": 0,
            "hash": bytes.fromhex(
                "1ed54ea01aab5e726a087e94a0dd52c0f49b149d7a773ae71a3dc099f623bcf1840393db68f8db476ab11e6159f030f2"
            ),
            "id": 1,
            "name": name,
            "size": 279,
            "types": [1, 3],
        }
    ]
    call, create = (item.consensus_timestamp for item in record.items)
    links = fetch(ledger.url, "select consensus_timestamp, entity_id from contract_transaction order by 1, 2")
    assert (call, 1002) in {(row["consensus_timestamp"], row["entity_id"]) for row in links}
    assert (call, 1003) in {(row["consensus_timestamp"], row["entity_id"]) for row in links}  # its state changes
    assert {(row["consensus_timestamp"], row["entity_id"]) for row in links} >= {(call, 2), (create, 1003)}
    hashes = fetch(ledger.url, "select consensus_timestamp, entity_id from contract_transaction_hash order by 1")
    assert hashes == [
        {"consensus_timestamp": call, "entity_id": 1002},
        {"consensus_timestamp": create, "entity_id": 1003},
    ]
    assert fetch(ledger.url, "select gas_consumed from contract_result") == [{"gas_consumed": None}] * 2
