"""The reference's v6 fixtures through rows_of_file and write_batch (the rows the reference's tests expect)."""

from __future__ import annotations

import pytest
from tests.importer.fixtures import FIRST, RECORDS, SECOND, record_bytes
from tests.importer.handlers.items import fetch, write
from tests.support import Ledger

from ledgermirror.importer.handlers import Batch, item_of, rows_of_file
from ledgermirror.importer.record_file import read_record_file

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
