"""Synthetic contract results (the reference's ``query.syntheticContractResults``, 0.157-0.164): the contract
result lists merge in one result per transaction made from its ``synthetic`` contract logs (HAPI token
transfers), NFT treasury-change wildcard logs and transactions with a real result left out; keyset pagination
across the mix, the filters, the ``from`` filter (real results only), the single-result routes and the setting
off."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from bench._explain import RecordingDatabase, explain, seq_scan_tables
from jsonschema import ValidationError
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.api.test_contract_result_lists import CREATE2, GLOBAL, PER_CONTRACT, SECOND, T, result, stamps, ts
from tests.importer.handlers.items import PAYER, account, basic, body, import_items, module, record_item, token
from tests.support import Ledger, reconfigure

from ledgermirror.db.sql import Statement
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
WILDCARD = "0xffffffffffffffff"
BLOCK = "cc" * 48
IMPORT_T = T + 1_000 * SECOND


def log(offset: int, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "consensus_timestamp": T + offset,
        "contract_id": 7001,
        "root_contract_id": 7001,
        "index": index,
        "payer_account_id": 9001,
        "synthetic": True,
        "topic0": TRANSFER,
        "topic1": "0x2329",
        "topic2": "0x232a",
        "topic3": None,
        "data": "0x64",
        "transaction_hash": "0x" + f"{offset:02x}" * 32,
        "transaction_index": offset,
        **extra,
    }


SETUP: dict[str, Any] = {
    "accounts": [{"num": 8001}, {"num": 9001}],
    "contracts": [{"num": 5001, "evm_address": CREATE2}],
    "contractresults": [result(1), result(4), result(7, transaction_nonce=1)],
    "contractlogs": [
        log(2),  # a fungible token transfer: two logs, one result
        log(2, index=1, topic1="0x232a", topic2="0x232b"),
        log(3, contract_id=5001, root_contract_id=5001),  # a synthetic log of contract 5001
        log(4, index=5),  # at a real result's timestamp: the real result only
        log(5, topic3=WILDCARD, data="0x"),  # an NFT treasury change: left out
        log(6, synthetic=False),  # not synthetic
        log(8, root_contract_id=None, topic3="0x01", data="0x"),  # an NFT transfer (serial 1)
    ],
    "recordFiles": [
        {"index": 10, "consensus_start": T, "consensus_end": T + 9, "hash": BLOCK, "gas_used": 400},
    ],
}


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def test_global_list_merges_synthetic_results(loaded: TestClient) -> None:
    body = loaded.get(GLOBAL).json()
    assert stamps(body) == [ts(T + offset) for offset in (8, 4, 3, 2, 1)]
    synthetic = body["results"][3]
    # Field values of a synthetic result: the reference's getSyntheticContractResultsQuery (contractService.js)
    # and its spec contracts/results/{id}/synthetic-nft-wildcard-excluded.json.
    assert synthetic["timestamp"] == ts(T + 2)
    assert synthetic["contract_id"] == "0.0.7001"
    assert synthetic["address"] == "0x0000000000000000000000000000000000001b59"
    assert synthetic["to"] == "0x0000000000000000000000000000000000001b59"
    assert synthetic["from"] == "0x0000000000000000000000000000000000002329"  # the payer
    assert synthetic["hash"] == "0x" + "02" * 32
    assert synthetic["transaction_index"] == 2
    assert synthetic["amount"] is None
    assert synthetic["bloom"] == "0x"
    assert synthetic["call_result"] == "0x"
    assert synthetic["function_parameters"] == "0x"
    assert synthetic["created_contract_ids"] == []
    assert synthetic["error_message"] is None
    assert synthetic["failed_initcode"] is None
    assert synthetic["gas_limit"] == 0
    assert synthetic["gas_used"] is None
    assert synthetic["gas_consumed"] is None
    assert synthetic["result"] == "SUCCESS"
    assert synthetic["status"] == "0x1"
    assert synthetic["block_number"] == 10
    assert synthetic["block_hash"] == "0x" + BLOCK
    of_contract = body["results"][2]
    assert of_contract["contract_id"] == "0.0.5001"
    assert of_contract["address"] == "0x" + CREATE2
    assert body["results"][0]["contract_id"] == "0.0.7001"  # a null root_contract_id: the log's contract


def test_per_contract_list_takes_the_contracts_synthetic_results(loaded: TestClient) -> None:
    body = loaded.get(PER_CONTRACT).json()
    assert stamps(body) == [ts(T + 4), ts(T + 3), ts(T + 1)]
    synthetic = body["results"][1]
    assert synthetic["from"] == "0x0000000000000000000000000000000000002329"
    assert synthetic["gas_limit"] == 0 and synthetic["gas_used"] is None and synthetic["amount"] is None
    # T+4: a result of contract 5001 and a synthetic log of 7001 (a precompile call's token transfer): the global
    # list shows the real result only, 7001's own list the synthetic one (it has no result of its own there)
    token = loaded.get("/api/v1/contracts/0.0.7001/results").json()
    assert stamps(token) == [ts(T + 8), ts(T + 4), ts(T + 2)]


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (GLOBAL, [1, 2, 3, 4, 8]),
        (PER_CONTRACT, [1, 3, 4]),
    ],
)
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pagination_across_real_and_synthetic(
    loaded: TestClient, url: str, expected: list[int], order: str, probe: bool
) -> None:
    reconfigure(loaded, Settings(pagination_probe=probe))
    seen: list[str] = []
    link: str | None = f"{url}?limit=2&order={order}"
    pages = 0
    while link is not None:
        body = loaded.get(link).json()
        seen += stamps(body)
        link = body["links"]["next"]
        pages += 1
    wanted = [ts(T + offset) for offset in expected]
    assert seen == (wanted if order == "asc" else wanted[::-1])
    assert pages >= len(expected) // 2


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"timestamp=gte:{ts(T + 2)}&timestamp=lt:{ts(T + 8)}", [4, 3, 2]),
        (f"timestamp={ts(T + 3)}", [3]),
        (f"timestamp={ts(T + 5)}", []),  # only a wildcard NFT log
        (f"timestamp={ts(T + 6)}", []),  # only a log that is not synthetic
        ("block.number=10&transaction.index=2", [2]),
        ("block.number=10&transaction.index=4", [4]),
        (f"block.hash={BLOCK}&transaction.index=3", [3]),
        ("internal=true", [8, 7, 4, 3, 2, 1]),
        ("from=0.0.9001", []),  # ``from`` filters real results only
        ("from=0.0.8001", [4, 1]),
        ("hbar=false", [8, 4, 3, 2, 1]),
    ],
)
def test_global_filters(loaded: TestClient, query: str, expected: list[int]) -> None:
    response = loaded.get(f"{GLOBAL}?{query}")
    assert response.status_code == 200, response.text
    assert stamps(response.json()) == [ts(T + offset) for offset in expected]


def test_setting_off_lists_real_results_only(loaded: TestClient) -> None:
    reconfigure(loaded, Settings(synthetic_contract_results=False))
    assert stamps(loaded.get(GLOBAL).json()) == [ts(T + 4), ts(T + 1)]
    assert stamps(loaded.get(PER_CONTRACT).json()) == [ts(T + 4), ts(T + 1)]
    assert loaded.get("/api/v1/contracts/0.0.7001/results").json()["results"] == []


def test_reference_spec_wildcard_excluded(client: TestClient, ledger: Ledger) -> None:
    """Ported from the reference's rest/__tests__/specs/contracts/results/synthetic-nft-wildcard-excluded.json."""
    ledger.load(
        {
            "contracts": [
                {
                    "created_timestamp": "187654000123000",
                    "evm_address": CREATE2,
                    "file_id": "5001",
                    "key": [1, 1, 1],
                    "num": "5001",
                    "timestamp_range": "[187654000123000,)",
                }
            ],
            "contractlogs": [
                {
                    "consensus_timestamp": "187654000123456",
                    "contract_id": 5001,
                    "root_contract_id": 5001,
                    "index": 0,
                    "payer_account_id": 5000,
                    "synthetic": True,
                    "topic0": TRANSFER,
                    "topic1": "0x",
                    "topic2": "0x0000000000000000000000000000000000001389",
                    "topic3": WILDCARD,
                    "transaction_hash": "0x185602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                    "transaction_index": 0,
                }
            ],
            "recordFiles": [
                {
                    "index": 10,
                    "count": 1,
                    "name": "2022-04-27T12_09_24.499938763Z.rcd",
                    "consensus_start": 187654000123000,
                    "consensus_end": 187654000123500,
                    "hash": SPEC_BLOCK,
                    "gas_used": 400000,
                }
            ],
        }
    )
    response = client.get(GLOBAL)
    assert response.status_code == 200
    assert response.json() == {"results": [], "links": {"next": None}}
    assert client.get(PER_CONTRACT).json()["results"] == []


# Ported from the reference's rest/__tests__/specs/contracts/results/{id}/synthetic-nft-wildcard-excluded.json and
# synthetic-nft-wildcard-excluded-by-transaction-id.json (the same setup; 32-byte hashes for the first, short
# ones for the second).
def _single_setup(hashes: tuple[str, str]) -> dict[str, Any]:
    def spec_log(stamp: str, topic3: str, index: int) -> dict[str, Any]:
        return {
            "bloom": [1, 2, 3],
            "consensus_timestamp": stamp,
            "contract_id": 5001,
            "data": [1, 2, 3],
            "root_contract_id": 5001,
            "index": 0,
            "payer_account_id": 5000,
            "synthetic": True,
            "topic0": TRANSFER,
            "topic1": "0x0000000000000000000000000000000000000005",
            "topic2": "0x0000000000000000000000000000000000001389",
            "topic3": topic3,
            "transaction_hash": f"0x{index + 1}85602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            "transaction_index": index,
        }

    return {
        "contracts": [
            {
                "created_timestamp": "187654000123000",
                "evm_address": CREATE2,
                "file_id": "5001",
                "key": [1, 1, 1],
                "num": "5001",
                "timestamp_range": "[187654000123000,)",
            }
        ],
        "transactions": [
            {
                "consensus_timestamp": 187654000123456,
                "payerAccountId": "5000",
                "transaction_hash": hashes[0],
                "type": 17,
                "valid_start_timestamp": 187654000123400,
            },
            {
                "consensus_timestamp": 187654000223456,
                "payerAccountId": "5000",
                "transaction_hash": hashes[1],
                "type": 17,
                "valid_start_timestamp": 187654000223400,
            },
        ],
        "contractlogs": [
            spec_log("187654000123456", "0x0000000000000000000000000000000000000001", 0),
            spec_log("187654000223456", WILDCARD, 1),
        ],
        "recordFiles": [
            {
                "index": 10,
                "count": 1,
                "name": "2022-04-27T12_09_24.499938763Z.rcd",
                "consensus_start": 187654000123000,
                "consensus_end": 187654000223500,
                "hash": SPEC_BLOCK,
                "gas_used": 400000,
            }
        ],
    }


SPEC_BLOCK = "fbd921184e229e2051280d827ba3b31599117af7eafba65dc0e5a998b70c48c0492bf793a150769b1b4fb2c9b7cb4c1c"
SPEC_LOG = {
    "address": "0x" + CREATE2,
    "bloom": "0x010203",
    "contract_id": "0.0.5001",
    "data": "0x0000000000000000000000000000000000000000000000000000000000010203",
    "index": 0,
    "topics": [
        TRANSFER,
        "0x0000000000000000000000000000000000000000000000000000000000000005",
        "0x0000000000000000000000000000000000000000000000000000000000001389",
        "0x0000000000000000000000000000000000000000000000000000000000000001",
    ],
}


def spec_detail(stamp: str, index: int, logs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        # The spec file's newer reference renders access_list as an array ([]); ours keeps the older rendering
        # (null without an Ethereum transaction), for every result (docs/compatibility.md, "access_list").
        "access_list": None,
        "address": "0x" + CREATE2,
        "amount": None,
        "block_gas_used": 400000,
        "block_hash": "0x" + SPEC_BLOCK,
        "block_number": 10,
        "bloom": "0x",
        "call_result": "0x",
        "chain_id": "0x128",
        "contract_id": "0.0.5001",
        "created_contract_ids": [],
        "error_message": None,
        "failed_initcode": None,
        "from": "0x0000000000000000000000000000000000001388",
        "function_parameters": "0x",
        "gas_consumed": None,
        "gas_limit": 0,
        "gas_price": None,
        "gas_used": None,
        "hash": f"0x{index + 1}85602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "logs": logs,
        "max_fee_per_gas": None,
        "max_priority_fee_per_gas": None,
        "nonce": None,
        "r": None,
        "result": "SUCCESS",
        "s": None,
        "state_changes": [],
        "status": "0x1",
        "timestamp": stamp,
        "to": "0x0000000000000000000000000000000000001389",
        "transaction_index": index,
        "type": 0,
        "v": None,
    }


def test_reference_spec_single_result_by_hash(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        _single_setup(
            (
                "0x185602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "0x285602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            )
        )
    )
    response = client.get(f"{GLOBAL}/0x185602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    assert response.status_code == 206, response.text
    assert response.json() == spec_detail("187654.000123456", 0, [SPEC_LOG])
    wildcard = client.get(f"{GLOBAL}/0x285602030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    assert wildcard.status_code == 404
    assert wildcard.json() == {"_status": {"messages": [{"message": "Not found"}]}}


def test_reference_spec_single_result_by_transaction_id_and_timestamp(client: TestClient, ledger: Ledger) -> None:
    ledger.load(_single_setup(("319a008fabde4d", "419a008fabde4d")))
    first = client.get(f"{GLOBAL}/0.0.5000-187654-000123400")
    assert first.status_code == 206, first.text
    assert first.json() == spec_detail("187654.000123456", 0, [SPEC_LOG])
    wildcard = client.get(f"{GLOBAL}/0.0.5000-187654-000223400")
    assert wildcard.status_code == 206, wildcard.text
    assert wildcard.json() == spec_detail("187654.000223456", 1, [])
    # /contracts/{id}/results/{timestamp} (ours: the same result, found by its contract)
    by_timestamp = client.get("/api/v1/contracts/0.0.5001/results/187654.000123456")
    assert by_timestamp.status_code == 206, by_timestamp.text
    assert by_timestamp.json() == spec_detail("187654.000123456", 0, [SPEC_LOG])
    assert client.get("/api/v1/contracts/0.0.5002/results/187654.000123456").status_code == 404


def test_single_routes_with_the_setting_off(client: TestClient, ledger: Ledger) -> None:
    ledger.load(_single_setup(("319a008fabde4d", "419a008fabde4d")))
    reconfigure(client, Settings(synthetic_contract_results=False))
    assert client.get(f"{GLOBAL}/0.0.5000-187654-000123400").status_code == 404
    assert client.get("/api/v1/contracts/0.0.5001/results/187654.000123456").status_code == 404


async def _seq_scans(url: str, statements: list[Statement]) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("set enable_seqscan = off")
        found: list[str] = []
        for statement in statements:
            found += [f"{name}: {statement.text[:80]}" for name in seq_scan_tables(await explain(conn, statement))]
        return found
    finally:
        await conn.close()


@pytest.mark.parametrize(
    "url",
    [
        GLOBAL,
        f"{GLOBAL}?order=asc&timestamp=gt:{ts(T + 1)}",
        "/api/v1/contracts/0.0.7001/results?limit=1",
        f"{GLOBAL}?block.number=10&transaction.index=2",
        f"{GLOBAL}/0x" + "02" * 32,
        f"/api/v1/contracts/0.0.7001/results/{ts(T + 2)}",
    ],
)
def test_every_synthetic_query_has_an_index(
    loaded: TestClient, ledger: Ledger, database: Prepared, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger.load(
        {
            "transactions": [
                {"consensus_timestamp": T + 2, "payerAccountId": "0.0.9001", "transaction_hash": "0x" + "02" * 32}
            ]
        }
    )
    ctx = loaded.app.state.ctx  # type: ignore[attr-defined]
    recorder = RecordingDatabase(ctx.database)
    monkeypatch.setattr(ctx, "db", recorder)
    response = loaded.get(url)
    assert response.status_code in (200, 206), response.text
    assert recorder.statements
    assert asyncio.run(_seq_scans(database.owner_url, recorder.statements)) == []


def test_imported_token_transfer_is_a_synthetic_result(client: TestClient, ledger: Ledger) -> None:
    """A HAPI token transfer through the real importer: its synthetic ``Transfer`` logs become one result on every
    route; an NFT transfer's log is not ``synthetic`` in our importer (see docs/compatibility.md), so it is not."""
    fungible, nft, sender, receiver = 5000, 6000, 1001, 1002
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody()
    moved = record_item(
        body("cryptoTransfer", transfer, valid_start=IMPORT_T - 7),
        at=IMPORT_T,
        tokenTransferLists=[
            basic.TokenTransferList(
                token=token(fungible),
                transfers=[
                    basic.AccountAmount(accountID=account(sender), amount=-30),
                    basic.AccountAmount(accountID=account(receiver), amount=30),
                ],
            )
        ],
    )
    nft_moved = record_item(
        body("cryptoTransfer", transfer, valid_start=IMPORT_T - 5),
        at=IMPORT_T + 1,
        tokenTransferLists=[
            basic.TokenTransferList(
                token=token(nft),
                nftTransfers=[
                    basic.NftTransfer(
                        senderAccountID=account(sender), receiverAccountID=account(receiver), serialNumber=5
                    )
                ],
            )
        ],
    )
    import_items(ledger.url, moved, nft_moved)
    listed = client.get(f"{GLOBAL}?timestamp=gte:{ts(IMPORT_T)}").json()["results"]
    assert [item["timestamp"] for item in listed] == [ts(IMPORT_T)]
    item = listed[0]
    digest = "0x" + bytes(moved.record.transactionHash[:32]).hex()
    assert item["contract_id"] == f"0.0.{fungible}"
    assert item["from"] == f"0x{PAYER:040x}"
    assert item["to"] == f"0x{fungible:040x}"
    assert item["hash"] == digest
    assert item["gas_limit"] == 0 and item["gas_used"] is None and item["result"] == "SUCCESS"
    assert stamps(client.get(f"/api/v1/contracts/0.0.{fungible}/results").json()) == [ts(IMPORT_T)]
    by_hash = client.get(f"{GLOBAL}/{digest}")
    assert by_hash.status_code == 206, by_hash.text
    detail = by_hash.json()
    assert detail["timestamp"] == ts(IMPORT_T) and detail["contract_id"] == f"0.0.{fungible}"
    assert [log["topics"][0] for log in detail["logs"]] == [TRANSFER]
    assert detail["logs"][0]["data"] == "0x" + f"{30:064x}"
    by_id = client.get(f"{GLOBAL}/0.0.{PAYER}-{(IMPORT_T - 7) // SECOND}-{(IMPORT_T - 7) % SECOND:09d}")
    assert by_id.status_code == 206, by_id.text
    assert by_id.json() == detail
    assert client.get(f"/api/v1/contracts/0.0.{fungible}/results/{ts(IMPORT_T)}").json() == detail


def _reference_spec_wins(error: ValidationError) -> bool:
    """As in test_contract_result_lists: the reference's spec tests expect ``access_list`` null without an
    Ethereum transaction and ``failed_initcode`` null, which its OpenAPI document types as an array and a
    string."""
    return bool(error.absolute_path) and error.absolute_path[-1] in ("access_list", "failed_initcode")


@pytest.mark.parametrize(
    ("url", "template"),
    [
        (GLOBAL, "/api/v1/contracts/results"),
        ("/api/v1/contracts/0.0.7001/results", "/api/v1/contracts/{contractIdOrAddress}/results"),
        (
            f"/api/v1/contracts/0.0.7001/results/{ts(T + 2)}",
            "/api/v1/contracts/{contractIdOrAddress}/results/{timestamp}",
        ),
    ],
)
def test_synthetic_answers_match_the_reference_schema(loaded: TestClient, url: str, template: str) -> None:
    response = loaded.get(url)
    assert response.status_code in (200, 206), response.text
    assert reference_openapi.schema_errors(template, response.json(), ignore=_reference_spec_wins) == []
