"""GET /api/v1/contracts/results/{transactionIdOrHash}/prestate (HIP-1485's prestateTracer; the reference web3's
``PrestateController`` and ``PrestateServiceImpl``, whose response shape the expectations follow) over mirrored
state on embedded PostgreSQL: a stored call replayed on the state before it, the accounts it touched before it
and, with ``diff=true``, what it changed."""

from __future__ import annotations

from typing import Any

import rlp
from starlette.testclient import TestClient
from tests.api.test_contract_call import (
    COMPILED,
    CREATIONS,
    HOLDER,
    SETUP,
    TARGET,
    TRACED,
    TRACED_AT,
    errors,
    selector,
    word,
)
from tests.support import Ledger

from ledgermirror.ledger.evm import keccak256

CALLED_AT = TRACED_AT + 5  # in block 2: increment() of CallTarget (counter 5 -> 6) by the treasury
STORED: dict[str, Any] = {
    "contractresults": [
        {"consensus_timestamp": CALLED_AT, "contract_id": 1001, "sender_id": 2, "payer_account_id": 2,
         "function_parameters": "0x" + selector("increment()"), "gas_limit": 100_000, "gas_used": 26_509,
         "transaction_hash": "0x" + "ef" * 32},
    ],
}  # fmt: skip
URL = "/api/v1/contracts/results/" + "ef" * 32 + "/prestate"
TREASURY = "0x" + format(2, "040x")
COUNTER = "0x" + word(1)


def test_prestate_and_diff(client: TestClient, ledger: Ledger) -> None:
    ledger.load(SETUP)
    ledger.load(STORED)
    response = client.get(URL)
    assert response.status_code == 200, response.text
    # the accounts read, in the order first read (the coinbase 0.0.98, paid nothing, left out); balances as the
    # mirror holds them before the call (CallTarget's 1000 of the snapshot plus the 57 sent to it since)
    assert response.json() == {
        "pre": [
            {"address": TREASURY, "balance": 10**18, "code": None, "nonce": 0, "storage": None},
            {"address": TARGET, "balance": 1057, "code": None, "nonce": 0, "storage": None},
        ],
        "post": [],
    }
    full = client.get(URL + "?diff=true&code=true&storage=true").json()
    runtime = "0x" + COMPILED["CallTarget"]["runtime"].removeprefix("0x")
    assert full["pre"] == [
        {"address": TREASURY, "balance": 10**18, "code": "", "nonce": 0, "storage": None},
        {"address": TARGET, "balance": 1057, "code": runtime, "nonce": 0, "storage": {COUNTER: "0x" + word(5)}},
    ]
    # after: what changed (the sender's nonce, as every EVM transaction moves it; the counter), the rest null
    assert full["post"] == [
        {"address": TREASURY, "balance": None, "code": None, "nonce": 1, "storage": None},
        {"address": TARGET, "balance": None, "code": None, "nonce": None, "storage": {COUNTER: "0x" + word(6)}},
    ]
    # the transaction id finds the same call (TRACED's increment() by 0.0.1010, which the mirror holds only by
    # its EVM address from a later creation: not an account before the call)
    ledger.load(TRACED)
    by_id = client.get("/api/v1/contracts/results/0.0.1010-2-999000000/prestate?diff=true&storage=true")
    assert by_id.status_code == 200, by_id.text
    assert [entry["address"] for entry in by_id.json()["pre"]] == [TARGET]
    assert by_id.json()["post"][-1]["storage"] == {COUNTER: "0x" + word(6)}


def test_prestate_errors(client: TestClient, ledger: Ledger) -> None:
    ledger.load(SETUP)
    ledger.load(TRACED)
    missing = client.get("/api/v1/contracts/results/0.0.1010-2-999000001/prestate")
    assert missing.status_code == 404
    assert errors(missing) == [
        {"message": "Not Found", "detail": "Transaction not found: 0.0.1010-2-999000001", "data": ""}
    ]
    unknown_hash = client.get("/api/v1/contracts/results/" + "ab" * 32 + "/prestate")
    assert unknown_hash.status_code == 404
    create = client.get("/api/v1/contracts/results/0.0.1010-2-999000050/prestate")  # a creation, no init code
    assert errors(create) == [
        {"message": "Not Found", "detail": f"Contract init code not found: {TRACED_AT + 50}", "data": ""}
    ]
    for query in ("diff=maybe", "code=1&code=2", "storage=gt:true", "other=1"):
        refused = client.get(URL + "?" + query)
        assert refused.status_code == 400, query
    assert client.get("/api/v1/contracts/results/not-a-transaction/prestate").status_code == 404


def test_prestate_of_a_creation(client: TestClient, ledger: Ledger) -> None:
    # The creation of Erc20 by 0.0.1010 (CREATIONS of test_contract_call): the new contract is only in post, with
    # its code, its nonce 1 and the slots its constructor wrote
    ledger.load(SETUP)
    ledger.load(CREATIONS)
    url = "/api/v1/contracts/results/0.0.1010-2-999000300/prestate?diff=true&code=true&storage=true"
    response = client.get(url)
    assert response.status_code == 200, response.text
    body = response.json()
    created = "0x" + keccak256(rlp.encode([bytes.fromhex(HOLDER[2:]), 0]))[12:].hex()
    assert created not in [entry["address"] for entry in body["pre"]]
    new = next(entry for entry in body["post"] if entry["address"] == created)
    assert new["code"] == "0x" + COMPILED["Erc20"]["runtime"].removeprefix("0x")
    assert new["nonce"] == 1 and new["balance"] == 0
    assert new["storage"]["0x" + word(2)] == "0x" + word(10**12)  # totalSupply
    assert all(int(value, 16) for value in new["storage"].values())  # only the slots it holds
