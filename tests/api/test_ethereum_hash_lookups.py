"""An Ethereum transaction found by its hashes after a real import: the importer writes two ``transaction_hash``
rows for it (the record's 48-byte hash and the 32-byte Ethereum hash, as the reference's importer does), and the
API answers each form as the reference's ``transactionHash.js`` does.

``GET /transactions/{hash}`` takes only 48-byte hashes (64 base64url characters or 96 hex digits): 64 hex digits of
an Ethereum hash are read as base64url (48 other bytes, so 404) and ``0x`` + 64 hex digits is no transaction id
(400). The ``transaction.hash`` filter of ``/contracts/results/logs`` takes 32 or 48 bytes: 32 bytes match every
hash that starts with them (the Ethereum hash's own row, or the record hash's first 32 bytes), 48 bytes only the
whole record hash (``getTransactionHash`` and its integration test in the reference)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.importer.handlers.items import (
    T0,
    basic,
    body,
    fetch,
    import_items,
    module,
    record_item,
)
from tests.support import Ledger

from ledgermirror.api.resources.transactions.transaction import INVALID_ID
from ledgermirror.simulator.evm import rlp

CONTRACT = 2000
AT = T0 + 5
ETHEREUM_HASH = bytes.fromhex("ee" * 16 + "0123456789abcdef" * 2)
LOGS = "/api/v1/contracts/results/logs"


def _contract() -> Any:
    return basic.ContractID(contractNum=CONTRACT)


def _legacy_transaction() -> bytes:
    return rlp([3, 7, 21_000, b"\x44" * 20, 0, b"\xca", 298 * 2 + 35 + 1, b"\x01" * 32, b"\x02" * 32])


@pytest.fixture
def imported(client: TestClient, ledger: Ledger) -> bytes:
    """One successful Ethereum transaction with two logs, imported; its record hash (48 bytes)."""
    types = module("contract_types_pb2")
    log = types.ContractLoginfo(
        contractID=_contract(), bloom=b"\x0b", topic=[b"\x00" * 31 + b"\x07"], data=b"\xda"
    )
    result = types.ContractFunctionResult(
        contractID=_contract(), gasUsed=21_000, logInfo=[log, log], sender_id=basic.AccountID(accountNum=1001)
    )
    ethereum = module("ethereum_transaction_pb2").EthereumTransactionBody(ethereum_data=_legacy_transaction())
    item = record_item(
        body("ethereumTransaction", ethereum),
        at=AT,
        contractCallResult=result,
        ethereum_hash=ETHEREUM_HASH,
    )
    import_items(ledger.url, item)
    record_hash = bytes(item.record.transactionHash)
    assert len(record_hash) == 48
    rows = fetch(
        ledger.url,
        "select hash || coalesce(hash_suffix, ''::bytea) as hash, payer_account_id from transaction_hash"
        " where consensus_timestamp = $1 order by length(hash || coalesce(hash_suffix, ''::bytea))",
        AT,
    )
    assert [bytes(row["hash"]) for row in rows] == [ETHEREUM_HASH, record_hash]  # the two rows under test
    return record_hash


def _timestamps(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["consensus_timestamp"] for item in response.json()["transactions"]]


def test_transaction_by_its_record_hash_once(client: TestClient, imported: bytes) -> None:
    expected = [f"{AT // 1_000_000_000}.{AT % 1_000_000_000:09d}"]
    for text in (imported.hex(), "0x" + imported.hex(), imported.hex().upper()):
        assert _timestamps(client.get(f"/api/v1/transactions/{text}")) == expected
    base64url = base64.urlsafe_b64encode(imported).decode()
    assert _timestamps(client.get(f"/api/v1/transactions/{base64url}")) == expected
    transaction = client.get(f"/api/v1/transactions/{imported.hex()}").json()["transactions"][0]
    assert transaction["name"] == "ETHEREUMTRANSACTION"
    assert transaction["transaction_hash"] == base64.b64encode(imported).decode()


def test_transaction_by_its_ethereum_hash_as_the_reference(client: TestClient, imported: bytes) -> None:
    """64 hex digits are 64 base64url characters to the reference: 48 other bytes, no such transaction."""
    response = client.get(f"/api/v1/transactions/{ETHEREUM_HASH.hex()}")
    assert response.status_code == 404, response.text
    assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}
    response = client.get(f"/api/v1/transactions/0x{ETHEREUM_HASH.hex()}")
    assert response.status_code == 400, response.text
    assert response.json() == {"_status": {"messages": [{"message": INVALID_ID}]}}


def _logs(client: TestClient, query: str) -> list[tuple[str, int]]:
    response = client.get(f"{LOGS}?{query}")
    assert response.status_code == 200, response.text
    return [(log["timestamp"], log["index"]) for log in response.json()["logs"]]


def test_contract_logs_by_either_hash(client: TestClient, imported: bytes) -> None:
    stamp = f"{AT // 1_000_000_000}.{AT % 1_000_000_000:09d}"
    expected = [(stamp, 1), (stamp, 0)]
    for text in (
        ETHEREUM_HASH.hex(),
        "0x" + ETHEREUM_HASH.hex(),
        imported.hex(),
        "0x" + imported.hex(),
        imported[:32].hex(),  # a 32-byte prefix of the record hash: its row matches too
    ):
        assert _logs(client, f"transaction.hash={text}") == expected, text
    assert _logs(client, f"transaction.hash={ETHEREUM_HASH.hex()}&order=asc") == expected[::-1]
    log = client.get(f"{LOGS}?transaction.hash={ETHEREUM_HASH.hex()}").json()["logs"][0]
    assert log["transaction_hash"] == "0x" + ETHEREUM_HASH.hex()
    # 48 bytes must match the whole stored hash: the Ethereum hash followed by 16 more bytes names nothing
    assert _logs(client, f"transaction.hash={ETHEREUM_HASH.hex()}{'00' * 16}") == []
    assert _logs(client, f"transaction.hash={'11' * 32}") == []
    assert _logs(client, f"transaction.hash={ETHEREUM_HASH.hex()}&timestamp=gt:{stamp}") == []
