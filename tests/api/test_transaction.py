"""GET /api/v1/transactions/{transactionIdOrHash}: id and hash forms, nonce, scheduled, long-term schedules,
batches, assessed custom fees, Cache-Control and bad input."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.api.context import AppContext
from ledgermirror.api.resources.transactions.transaction import INVALID_ID
from ledgermirror.clock import FixedClock

URL = "/api/v1/transactions"
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
V = 1_700_000_000 * SECOND  # the valid start of the transaction id 0.0.1001-1700000000-000000000
ID = "0.0.1001-1700000000-000000000"
HASH = bytes(range(100, 148))
OTHER_HASH = bytes(range(10, 58))


def ts(nanos: int) -> str:
    return f"{nanos // SECOND}.{nanos % SECOND:09d}"


def tx(consensus: int, **extra: Any) -> dict[str, Any]:
    return {
        "consensus_timestamp": consensus,
        "valid_start_timestamp": V,
        "payerAccountId": "0.0.1001",
        "nodeAccountId": "0.0.3",
        **extra,
    }


LEDGER: dict[str, Any] = {
    "accounts": [{"num": 3}, {"num": 98}, {"num": 1001}, {"num": 1002}],
    "transactions": [
        tx(V + 5, transaction_hash=HASH.hex()),
        tx(V + 6, nonce=1, parent_consensus_timestamp=V + 5, transaction_hash=HASH.hex()),
        tx(V + 7, nonce=2, parent_consensus_timestamp=V + 5),
        # the same id from another payer, and the same payer with another valid start
        tx(V + 8, payerAccountId="0.0.1002"),
        tx(V + 9, valid_start_timestamp=V + 1),
        # the same hash from another payer: a hash lookup keeps the first row's payer
        tx(V + 10, payerAccountId="0.0.1002", valid_start_timestamp=V + 2, transaction_hash=HASH.hex()),
        tx(V + 11, valid_start_timestamp=V + 3, transaction_hash=OTHER_HASH.hex()),
    ],
    "assessedcustomfees": [
        {
            "amount": 7,
            "collector_account_id": "0.0.1002",
            "consensus_timestamp": V + 5,
            "effective_payer_account_ids": ["0.0.1001"],
            "token_id": "0.0.2000",
            "payer_account_id": "0.0.1001",
        },
        {
            "amount": 3,
            "collector_account_id": "0.0.1002",
            "consensus_timestamp": V + 5,
            "payer_account_id": "0.0.1001",
        },
    ],
}


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(LEDGER)
    return client


def stamps(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    assert "links" not in response.json()
    return [int(item["consensus_timestamp"].replace(".", "")) - V for item in response.json()["transactions"]]


def messages(response: Any, status: int = 400) -> list[str]:
    assert response.status_code == status, response.text
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_by_id_every_transaction_of_the_id_oldest_first(loaded: TestClient) -> None:
    response = loaded.get(f"{URL}/{ID}")
    assert stamps(response) == [5, 6, 7]
    assert response.headers["cache-control"] == "public, max-age=600"
    first, child, _ = response.json()["transactions"]
    assert first["assessed_custom_fees"] == [
        {
            "amount": 3,
            "collector_account_id": "0.0.1002",
            "effective_payer_account_ids": [],
            "token_id": None,
        },
        {
            "amount": 7,
            "collector_account_id": "0.0.1002",
            "effective_payer_account_ids": ["0.0.1001"],
            "token_id": "0.0.2000",
        },
    ]
    assert list(first)[:2] == ["assessed_custom_fees", "batch_key"]
    assert "assessed_custom_fees" not in child
    assert child["parent_consensus_timestamp"] == ts(V + 5) and child["nonce"] == 1
    assert first["transaction_id"] == ID
    assert base64.b64decode(first["transaction_hash"]) == HASH


def test_by_id_with_nonce_and_scheduled(loaded: TestClient) -> None:
    assert stamps(loaded.get(f"{URL}/{ID}?nonce=1")) == [6]
    assert stamps(loaded.get(f"{URL}/{ID}?nonce=eq:2")) == [7]
    assert stamps(loaded.get(f"{URL}/{ID}?nonce=0&nonce=2")) == [7]  # the last value wins
    assert stamps(loaded.get(f"{URL}/{ID}?scheduled=false")) == [5, 6, 7]
    assert stamps(loaded.get(f"{URL}/{ID}?scheduled=true&scheduled=FALSE&nonce=0")) == [5]
    assert messages(loaded.get(f"{URL}/{ID}?nonce=3"), 404) == ["Not found"]
    assert messages(loaded.get(f"{URL}/{ID}?scheduled=true"), 404) == ["Not found"]
    assert stamps(loaded.get(f"{URL}/0.0.1001-1700000000-1")) == [9]  # nanos left-padded
    assert stamps(loaded.get(f"{URL}/0.0.1002-1700000000-0")) == [8]


@pytest.mark.parametrize(
    "path",
    [
        HASH.hex(),
        "0x" + HASH.hex(),
        HASH.hex().upper(),
        base64.b64encode(HASH).decode(),
        base64.urlsafe_b64encode(HASH).decode(),
    ],
)
def test_by_hash_in_every_form(loaded: TestClient, path: str) -> None:
    response = loaded.get(f"{URL}/{path}")
    assert stamps(response) == [5, 6]  # the payer of the first row (0.0.1001), not 0.0.1002's V+10
    assert response.headers["cache-control"] == "public, max-age=600"
    assert stamps(loaded.get(f"{URL}/{path}?nonce=1")) == [6]


def test_by_hash_without_stored_payers(loaded: TestClient, ledger: Ledger) -> None:
    ledger.execute("update transaction_hash set payer_account_id = null")
    assert stamps(loaded.get(f"{URL}/{HASH.hex()}")) == [5, 6, 10]
    assert stamps(loaded.get(f"{URL}/{OTHER_HASH.hex()}")) == [11]


def test_not_found(loaded: TestClient) -> None:
    for path in (
        "0.0.1001-1700000001-000000000",
        "0.0.4242-1700000000-000000000",
        "ab" * 48,
        "A" * 64,
        "0.0.1-9223372036-854775807",  # the last valid start a bigint holds: its window ends there too
        "1023.65535.274877906943-1-1",
    ):
        assert messages(loaded.get(f"{URL}/{path}"), 404) == ["Not found"]


def _schedule_ledger(execution_after: int | None) -> dict[str, Any]:
    rows = [tx(V + 5, type=42, entity_id="0.0.5000")]
    if execution_after is not None:
        rows.append(tx(V + execution_after, scheduled=True, transaction_hash=OTHER_HASH.hex()))
    return {"accounts": [{"num": 3}, {"num": 98}, {"num": 1001}], "transactions": rows}


def _at(client: TestClient, now: int) -> None:
    current: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    reconfigure(client, current.settings, FixedClock(now))


def test_a_long_term_schedule_is_found_past_the_usual_window(client: TestClient, ledger: Ledger) -> None:
    ledger.load(_schedule_ledger(execution_after=10 * 24 * 60 * MINUTE))
    response = client.get(f"{URL}/{ID}")
    assert stamps(response) == [5, 10 * 24 * 60 * MINUTE]
    assert response.headers["cache-control"] == "public, max-age=600"
    assert stamps(client.get(f"{URL}/{ID}?scheduled=true")) == [10 * 24 * 60 * MINUTE]
    assert stamps(client.get(f"{URL}/{ID}?scheduled=false")) == [5]


def test_a_pending_schedule_is_cached_briefly(client: TestClient, ledger: Ledger) -> None:
    ledger.load(_schedule_ledger(execution_after=None))
    _at(client, V + 60 * MINUTE)
    response = client.get(f"{URL}/{ID}")
    assert stamps(response) == [5]
    assert response.headers["cache-control"] == "public, max-age=5"
    # with scheduled given the rule does not apply
    assert client.get(f"{URL}/{ID}?scheduled=false").headers["cache-control"] == "public, max-age=600"
    # once the schedule can no longer run, the answer is final
    _at(client, V + 90_000 * MINUTE)
    assert client.get(f"{URL}/{ID}?nonce=0").headers["cache-control"] == "public, max-age=600"


def test_a_batch_lists_its_inner_transactions(client: TestClient, ledger: Ledger) -> None:
    inner_start = V + 2
    ledger.load(
        {
            "accounts": [{"num": 3}, {"num": 98}, {"num": 1001}, {"num": 1002}],
            "transactions": [
                tx(V + 5, type=74, inner_transactions=["0.0.1002", inner_start]),
                tx(
                    V + 6,
                    payerAccountId="0.0.1002",
                    valid_start_timestamp=inner_start,
                    parent_consensus_timestamp=V + 5,
                ),
                tx(V + 7, payerAccountId="0.0.1002", valid_start_timestamp=inner_start + 1),
            ],
        }
    )
    response = client.get(f"{URL}/{ID}")
    assert stamps(response) == [5, 6]
    assert [item["name"] for item in response.json()["transactions"]] == ["ATOMICBATCH", "CRYPTOTRANSFER"]
    assert "inner_transactions" not in response.json()["transactions"][0]


@pytest.mark.parametrize(
    "path",
    [
        "0.1.10-1234567891.000000000",
        "0.0.10-1234567891-0000000000",
        "0.0.10-12345678912345678912-0",
        "0.0.10",
        "1.2.3.4-1-1",
        "0.0.274877906944-1-1",
        "9999999999.0.1-1-1",
        "izUDXqZ8gOhKlL5vbFInnw2VObTXzNWEH2QOg7XOUQwl9Mp2SVil8lufZIU6xJEEk===",
        "ab" * 47,
        "0x" + "ab" * 47,
        "%00",
        "0.0.10-1234567891-0%00",
        "é" * 10,
    ],
)
def test_an_invalid_path_is_400(client: TestClient, path: str) -> None:
    response = client.get(f"{URL}/{path}")
    assert messages(response) == [INVALID_ID]
    assert INVALID_ID.startswith('Invalid Transaction id. Please use "shard.realm.num-sss-nnn" format')


def test_invalid_parameters_one_message_per_value(client: TestClient) -> None:
    query = (
        "scheduled=ne:true&scheduled=lte:true&scheduled=lt:true&scheduled=gte:true&scheduled=gt:true&scheduled=1"
        "&scheduled=&nonce=-1&nonce=2147483648&nonce=x&nonce=lt:10&token.id=0.0.45678"
    )
    response = client.get(f"{URL}/{ID}?{query}")
    assert messages(response) == ["Invalid parameter: scheduled"] * 7 + ["Invalid parameter: nonce"] * 4 + [
        "Unknown query parameter: token.id"
    ]
    assert messages(client.get(f"{URL}/{ID}?nonce=1%00")) == ["Invalid parameter: nonce"]
    assert messages(client.get(f"{URL}/{ID}?scheduled=true%00")) == ["Invalid parameter: scheduled"]
    assert messages(client.get(f"{URL}/{ID}?limit=1")) == ["Unknown query parameter: limit"]
