"""GET /api/v1/topics/{topicId}: keys, fees, fee-exempt keys, the three 404s and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.importer.handlers.items import T0, basic, body, fetch, import_items, module, record_item
from tests.support import Ledger

ED25519 = "7" * 64
ED25519_KEY = bytes.fromhex("1220" + ED25519)
ECDSA = "02" + "8" * 64
KEY_LIST = bytes.fromhex("0a221220" + ED25519 + "0a233a21" + ECDSA)  # KeyList{keys: [ed25519, ecdsa]}


def _setup(ledger: Ledger, *, entity: bool = True, fees: bool = True) -> None:
    setup: dict[str, Any] = {}
    if entity:
        setup["entities"] = [
            {
                "num": 7,
                "type": "TOPIC",
                "memo": "topic memo",
                "auto_renew_account_id": 9,
                "auto_renew_period": 7776000,
                "created_timestamp": 0,
                "timestamp_range": "[1234567890000000001,)",
            }
        ]
    if fees:
        setup["customfees"] = [
            {
                "entity_id": "0.0.7",
                "fixed_fees": [
                    {"amount": 10, "collector_account_id": "0.0.9"},
                    {"amount": 3, "collector_account_id": "0.0.9", "denominating_token_id": "0.0.5000"},
                ],
                "timestamp_range": "[1234567890000000001,)",
            }
        ]
    ledger.load(setup)
    ledger.execute(
        "insert into topic (admin_key, created_timestamp, id, fee_exempt_key_list, fee_schedule_key, submit_key, "
        "timestamp_range) values ($1, 1234567890000000001, 7, $2, $3, null, '[1234567890000000001,)')",
        ED25519_KEY,
        KEY_LIST,
        bytes.fromhex("3200"),
    )


def test_topic_with_every_field(client: TestClient, ledger: Ledger) -> None:
    _setup(ledger)
    response = client.get("/api/v1/topics/0.0.7?ignored=1")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "public, max-age=5"
    body = response.json()
    assert body == {
        "admin_key": {"_type": "ED25519", "key": ED25519},
        "auto_renew_account": "0.0.9",
        "auto_renew_period": 7776000,
        "created_timestamp": "0.0",
        "custom_fees": {
            "created_timestamp": "1234567890.000000001",
            "fixed_fees": [
                {"amount": 10, "collector_account_id": "0.0.9", "denominating_token_id": None},
                {"amount": 3, "collector_account_id": "0.0.9", "denominating_token_id": "0.0.5000"},
            ],
        },
        "deleted": False,
        "fee_exempt_key_list": [
            {"_type": "ED25519", "key": ED25519},
            {"_type": "ECDSA_SECP256K1", "key": ECDSA},
        ],
        "fee_schedule_key": None,
        "memo": "topic memo",
        "submit_key": None,
        "timestamp": {"from": "1234567890.000000001", "to": None},
        "topic_id": "0.0.7",
    }
    assert client.get("/api/v1/topics/7").json() == body
    assert reference_schema_errors("/api/v1/topics/{topicId}", body) == []


@pytest.mark.parametrize(
    ("entity", "fees", "detail"),
    [(False, True, "Entity not found"), (True, False, "Custom fee for entity not found")],
)
def test_missing_parts(client: TestClient, ledger: Ledger, entity: bool, fees: bool, detail: str) -> None:
    _setup(ledger, entity=entity, fees=fees)
    response = client.get("/api/v1/topics/7")
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "Not found", "detail": detail}]}}


def test_unknown_topic(client: TestClient) -> None:
    response = client.get("/api/v1/topics/0.0.8")
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "Not found", "detail": "Topic not found"}]}}


@pytest.mark.parametrize("path", ["abc", "0.0.-1", "1.2.3.4", "92233720368547758080", "7%00", "messages"])
def test_bad_topic_id(client: TestClient, path: str) -> None:
    response = client.get(f"/api/v1/topics/{path}")
    assert response.status_code == 400
    assert response.json() == {"_status": {"messages": [{"message": "Invalid parameter: topicId"}]}}


def test_imported_topic_without_fees(client: TestClient, ledger: Ledger) -> None:
    """A ConsensusCreateTopic without custom fees, through the importer (which writes ``fixed_fees = []``, as the
    reference's does): ``custom_fees`` is ``{created_timestamp, fixed_fees: []}``, as the reference's
    ``TopicMapperTest.mapEmptyAndNulls`` expects of an empty list."""
    create = module("consensus_create_topic_pb2").ConsensusCreateTopicTransactionBody(memo="no fees")
    item = record_item(
        body("consensusCreateTopic", create), at=T0, receipt={"topicID": basic.TopicID(topicNum=3000)}
    )
    import_items(ledger.url, item)
    assert [row["fixed_fees"] for row in fetch(ledger.url, "select fixed_fees::text from custom_fee")] == ["[]"]
    response = client.get("/api/v1/topics/0.0.3000")
    assert response.status_code == 200, response.text
    topic = response.json()
    created = f"{T0 // 1_000_000_000}.{T0 % 1_000_000_000:09d}"
    assert topic["custom_fees"] == {"created_timestamp": created, "fixed_fees": []}
    assert (topic["memo"], topic["topic_id"], topic["created_timestamp"]) == ("no fees", "0.0.3000", created)
    assert topic["fee_exempt_key_list"] == [] and topic["fee_schedule_key"] is None
    assert reference_schema_errors("/api/v1/topics/{topicId}", topic) == []


@pytest.mark.parametrize("stored", ["'[]'::jsonb", "null"])
def test_empty_or_null_fixed_fees(client: TestClient, ledger: Ledger, stored: str) -> None:
    """``TopicMapperTest.mapEmptyAndNulls``: an empty list and NULL both render ``fixed_fees: []``."""
    _setup(ledger)
    ledger.execute(f"update custom_fee set fixed_fees = {stored}")
    custom_fees = client.get("/api/v1/topics/0.0.7").json()["custom_fees"]
    assert custom_fees == {"created_timestamp": "1234567890.000000001", "fixed_fees": []}
