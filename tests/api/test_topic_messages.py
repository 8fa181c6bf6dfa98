"""The topic message routes: /topics/{id}/messages, /topics/{id}/messages/{seq}, /topics/messages/{timestamp}:
encodings, chunk info, every parameter, pagination, the lookup-table mode and bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/topics/7/messages"
T0 = 1_234_567_890_000_000_000
MONTH = 31 * 86_400 * 1_000_000_000


def message(sequence: int, **overrides: Any) -> dict[str, Any]:
    return {"consensus_timestamp": str(T0 + sequence), "sequence_number": sequence, "topic_id": 7, **overrides}


TEXT = "\\x" + "h\u00e9llo \x00".encode().hex()
MESSAGES = [message(n) for n in range(1, 6)] + [
    message(6, chunk_num=1, chunk_total=2, payer_account_id=10, valid_start_timestamp=str(T0)),
    message(
        7,
        chunk_num=2,
        chunk_total=2,
        initial_transaction_id=[10, 6, 8, -46, -123, -40, -52, 4, 18, 2, 24, 3, 24, 1, 32, 1],
    ),
    message(8, consensus_timestamp=str(T0 + MONTH + 8), message=TEXT, running_hash_version=None),
    {"consensus_timestamp": str(T0 + 99), "sequence_number": 1, "topic_id": 8},
]
SUBMITS = [
    {"consensus_timestamp": str(T0 + n), "payerAccountId": "0.0.3", "type": 27, "entity_id": "0.0.7"}
    for n in (2, 3)
] + [
    {"consensus_timestamp": str(T0 + 4), "payerAccountId": "0.0.3", "type": 27, "entity_id": "0.0.7", "result": 7}
]


@pytest.fixture
def topics(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"topicmessages": MESSAGES, "transactions": SUBMITS})
    return client


def sequences(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["sequence_number"] for item in response.json()["messages"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def follow(client: TestClient, url: str) -> list[int]:
    seen: list[int] = []
    while url:
        response = client.get(url)
        seen += sequences(response)
        url = response.json()["links"]["next"]
    return seen


def test_messages_in_consensus_order_with_every_field(topics: TestClient) -> None:
    response = topics.get(URL)
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert [m["sequence_number"] for m in body["messages"]] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert body["messages"][0] == {
        "chunk_info": None,
        "consensus_timestamp": "1234567890.000000001",
        "message": "bWVzc2FnZQ==",
        "payer_account_id": "0.0.3",
        "running_hash": "cnVubmluZ19oYXNo",
        "running_hash_version": 2,
        "sequence_number": 1,
        "topic_id": "0.0.7",
    }
    assert body["links"]["next"] is None
    assert reference_schema_errors("/api/v1/topics/{topicId}/messages", body) == []


def test_chunk_info_from_the_row_and_from_the_stored_transaction_id(topics: TestClient) -> None:
    by_sequence = {m["sequence_number"]: m for m in topics.get(URL).json()["messages"]}
    assert by_sequence[6]["chunk_info"] == {
        "initial_transaction_id": {
            "account_id": "0.0.10",
            "nonce": None,
            "scheduled": None,
            "transaction_valid_start": "1234567890.000000000",
        },
        "number": 1,
        "total": 2,
    }
    assert by_sequence[7]["chunk_info"]["initial_transaction_id"] == {
        "account_id": "0.0.3",
        "nonce": 1,
        "scheduled": True,
        "transaction_valid_start": "1234567890.000000000",
    }
    assert by_sequence[8]["running_hash_version"] == 3  # NULL in the row


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", "utf8"])
def test_utf8_encoding_shows_text(topics: TestClient, encoding: str) -> None:
    found = topics.get(f"{URL}?encoding={encoding}&sequencenumber=8").json()["messages"]
    assert [m["message"] for m in found] == ["h\u00e9llo \x00"]
    assert topics.get(f"{URL}?encoding=BASE64&sequencenumber=1").json()["messages"][0]["message"] == "bWVzc2FnZQ=="


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sequencenumber=2", [2]),
        ("sequenceNumber=gte:7", [7, 8]),
        ("sequencenumber=eq:7", [7]),
        ("sequencenumber=gt:3&sequencenumber=lt:6", [4, 5]),
        ("sequencenumber=ne:1&sequencenumber=lte:3", [2, 3]),
        ("timestamp=1234567890.000000003", [3]),
        ("timestamp=gt:1234567890.000000004&timestamp=lte:1234567890.000000006", [5, 6]),
        ("timestamp=ne:1234567890.000000001&timestamp=lt:1234567890.000000003", [2]),
        ("timestamp=gte:1234567890.000000005&order=desc", [8, 7, 6, 5]),
        ("limit=2", [1, 2]),
        ("sequencenumber=2&sequencenumber=3", []),
    ],
)
def test_filters(topics: TestClient, query: str, expected: list[int]) -> None:
    assert sequences(topics.get(f"{URL}?{query}")) == expected


def test_other_topics_and_id_forms(topics: TestClient) -> None:
    assert sequences(topics.get("/api/v1/topics/0.0.8/messages")) == [1]
    assert sequences(topics.get("/api/v1/topics/0.8/messages")) == [1]
    assert sequences(topics.get("/api/v1/topics/9/messages")) == []


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pagination_to_the_end(topics: TestClient, api_settings: Settings, probe: bool, order: str) -> None:
    reconfigure(topics, dataclasses.replace(api_settings, pagination_probe=probe))
    seen = follow(topics, f"{URL}?limit=3&order={order}&sequencenumber=gte:2")
    expected = [2, 3, 4, 5, 6, 7, 8]
    assert seen == (expected if order == "asc" else expected[::-1])
    link = topics.get(f"{URL}?sequencenumber=gt:2&timestamp=lte:1234567890.000000006&limit=2").json()["links"]
    assert link["next"] == (
        "/api/v1/topics/7/messages?sequencenumber=gt:2&timestamp=lte:1234567890.000000006"
        "&timestamp=gt:1234567890.000000004&limit=2"
    )


def _lookup(topics: TestClient, ledger: Ledger, api_settings: Settings) -> None:
    from ledgermirror.conformance import topics_schedules

    rows = [(m["topic_id"], m["sequence_number"], int(m["consensus_timestamp"])) for m in MESSAGES]
    lookups = [row.values for row in topics_schedules.generated_lookup_rows(rows)]
    ledger.load({"topicmessagelookups": [{**row, "topic_id": row["topic_id"]} for row in lookups]})
    reconfigure(topics, dataclasses.replace(api_settings, topic_message_lookup=True))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [1, 2, 3, 4, 5, 6, 7, 8]),
        ("sequencenumber=8", [8]),
        ("sequencenumber=gte:5&limit=2", [5, 6]),
        ("timestamp=gt:1234567890.000000100", [8]),
        ("sequencenumber=2&sequencenumber=3", []),
        ("sequencenumber=gt:8", []),
        ("timestamp=lt:1234567890.000000001", []),
    ],
)
def test_lookup_table_mode_gives_the_same_answers(
    topics: TestClient, ledger: Ledger, api_settings: Settings, query: str, expected: list[int]
) -> None:
    _lookup(topics, ledger, api_settings)
    assert sequences(topics.get(f"{URL}?{query}")) == expected
    assert follow(topics, f"{URL}?limit=3") == [1, 2, 3, 4, 5, 6, 7, 8]
    assert topics.get(f"{URL}/8").json()["sequence_number"] == 8
    assert topics.get(f"{URL}/9").status_code == 404


@pytest.mark.parametrize("key", ["sequencenumber", "timestamp"])
def test_lookup_table_mode_refuses_ne(
    topics: TestClient, ledger: Ledger, api_settings: Settings, key: str
) -> None:
    _lookup(topics, ledger, api_settings)
    response = topics.get(f"{URL}?{key}=ne:2")
    assert response.status_code == 400
    assert messages(response) == [f"Not equal (ne) operator is not supported for {key}"]


def test_message_by_sequence_number(topics: TestClient) -> None:
    response = topics.get(f"{URL}/7")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=600"
    assert response.json()["chunk_info"]["number"] == 2
    assert topics.get("/api/v1/topics/0.0.8/messages/1").json()["consensus_timestamp"] == "1234567890.000000099"
    assert topics.get(f"{URL}/6?encoding=utf-8").status_code == 400
    assert topics.get(f"{URL}/9").json() == {"_status": {"messages": [{"message": "Not found"}]}}


def test_message_by_timestamp(topics: TestClient) -> None:
    response = topics.get("/api/v1/topics/messages/1234567890.000000002")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=600"
    assert response.json()["sequence_number"] == 2
    assert topics.get("/api/v1/topics/messages/1234567890.000000003").json()["sequence_number"] == 3
    assert topics.get("/api/v1/topics/messages/1234567890.000000004").status_code == 404  # failed submit
    assert topics.get("/api/v1/topics/messages/1234567890.000000005").status_code == 404  # no transaction
    assert topics.get("/api/v1/topics/messages/1234567890.000000009").status_code == 404


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/api/v1/topics/92233720368547758080/messages", ["Invalid parameter: topic.id"]),
        ("/api/v1/topics/0x0000000000000000000000000000000000000007/messages", ["Invalid parameter: topic.id"]),
        ("/api/v1/topics/7%00/messages", ["Invalid parameter: topic.id"]),
        (f"{URL}?sequencenumber=0", ["Invalid parameter: sequencenumber"]),
        (
            f"{URL}?sequencenumber=-1&timestamp=abc",
            ["Invalid parameter: sequencenumber", "Invalid parameter: timestamp"],
        ),
        (f"{URL}?sequencenumber=9223372036854775808", ["Invalid parameter: sequencenumber"]),
        (f"{URL}?encoding=hex", ["Invalid parameter: encoding"]),
        (f"{URL}?encoding=base64&encoding=utf-8", ["Invalid parameter: encoding"]),
        (f"{URL}?encoding=gt:base64", ["Invalid parameter: encoding"]),
        (f"{URL}?limit=0&order=up", ["Invalid parameter: limit", "Invalid parameter: order"]),
        (f"{URL}?timestamp=%00", ["Invalid parameter: timestamp"]),
        (f"{URL}?topic.id=7", ["Unknown query parameter: topic.id"]),
        ("/api/v1/topics/0.0.-3/messages/a", ["Invalid parameter: topic.id", "Invalid parameter: sequencenumber"]),
        (f"{URL}/0", ["Invalid parameter: sequencenumber"]),
        (f"{URL}/1%00", ["Invalid parameter: sequencenumber"]),
        (f"{URL}/1?limit=1", ["Unknown query parameter: limit"]),
        ("/api/v1/topics/messages/123abc", ["Invalid parameter: consensus_timestamp"]),
        ("/api/v1/topics/messages/1%00", ["Invalid parameter: consensus_timestamp"]),
        ("/api/v1/topics/messages/1234567890.000000002?limit=2", ["Unknown query parameter: limit"]),
    ],
)
def test_bad_input(client: TestClient, url: str, expected: list[str]) -> None:
    response = client.get(url)
    assert response.status_code == 400, response.text
    assert messages(response) == expected
