"""GET /api/v1/schedules and /api/v1/schedules/{scheduleId}: fields, signatures, filters, pagination, the
cache rule of final schedules and bad input."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.importer.handlers.items import fetch
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/schedules"
T0 = 1_234_567_890_000_000_000
MINUTE = 60_000_000_000


class FixedClock:
    def __init__(self, now_ns: int) -> None:
        self.now = now_ns

    def now_ns(self) -> int:
        return self.now


def schedule(num: int, **overrides: Any) -> dict[str, Any]:
    return {"consensus_timestamp": str(T0 + num), "schedule_id": f"0.0.{num}", **overrides}


SETUP: dict[str, Any] = {
    "accounts": [{"num": 1024}, {"num": 3333}],
    "entities": [
        {"num": 2000, "type": "SCHEDULE", "memo": "executed", "key": [1, 1, 1]},
        {"num": 2001, "type": "SCHEDULE", "memo": "deleted", "deleted": True},
        {"num": 2002, "type": "SCHEDULE", "memo": "pending"},
        {"num": 2004, "type": "SCHEDULE", "memo": "implicitly expiring"},
    ],
    "schedules": [
        schedule(2000, executed_timestamp=str(T0 + 5 * MINUTE), expiration_time=str(T0 + 10 * MINUTE)),
        schedule(2001),
        schedule(2002, creator_account_id="0.0.3333", expiration_time=str(T0 + 10 * MINUTE), wait_for_expiry=True),
        schedule(2003, creator_account_id="0.0.3333"),
        schedule(2004),
    ],
    "transactionsignatures": [
        {
            "consensus_timestamp": str(T0 + 10),
            "public_key_prefix": [3, 3],
            "entity_id": "0.0.2000",
            "signature": [4, 4],
            "type": 6,
        },
        {
            "consensus_timestamp": str(T0 + 1),
            "public_key_prefix": [1, 1],
            "entity_id": "0.0.2000",
            "signature": [2, 2],
            "type": 3,
        },
        {
            "consensus_timestamp": str(T0 + 2),
            "public_key_prefix": [5],
            "entity_id": "0.0.2002",
            "signature": [6],
            "type": None,
        },
    ],
}


@pytest.fixture
def schedules(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["schedule_id"] for item in response.json()["schedules"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_list_with_every_field(schedules: TestClient) -> None:
    response = schedules.get(URL)
    assert response.headers["cache-control"] == "public, max-age=10"
    body = response.json()
    assert [s["schedule_id"] for s in body["schedules"]] == [f"0.0.{n}" for n in range(2000, 2005)]
    first = body["schedules"][0]
    assert list(first) == [
        "admin_key",
        "deleted",
        "consensus_timestamp",
        "creator_account_id",
        "executed_timestamp",
        "expiration_time",
        "memo",
        "payer_account_id",
        "schedule_id",
        "signatures",
        "transaction_body",
        "wait_for_expiry",
    ]
    assert first["admin_key"] == {"_type": "ProtobufEncoded", "key": "010101"}
    assert first["executed_timestamp"] == "1234568190.000000000"
    assert first["transaction_body"] == "AQECAgMD"
    assert first["signatures"] == [
        {
            "consensus_timestamp": "1234567890.000000001",
            "public_key_prefix": "AQE=",
            "signature": "AgI=",
            "type": "ED25519",
        },
        {
            "consensus_timestamp": "1234567890.000000010",
            "public_key_prefix": "AwM=",
            "signature": "BAQ=",
            "type": "ECDSA_SECP256K1",
        },
    ]
    by_id = {s["schedule_id"]: s for s in body["schedules"]}
    assert by_id["0.0.2002"]["signatures"][0]["type"] == "UNKNOWN"
    assert by_id["0.0.2002"]["wait_for_expiry"] is True
    assert by_id["0.0.2001"]["deleted"] is True and by_id["0.0.2001"]["signatures"] == []
    assert "memo" not in by_id["0.0.2003"] and "deleted" not in by_id["0.0.2003"]  # no entity row
    assert body["links"]["next"] is None
    assert reference_schema_errors(URL, body) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("account.id=3333", [2002, 2003]),
        ("account.id=0.0.1024&order=desc", [2004, 2001, 2000]),
        ("account.id=ne:0.0.1024", [2002, 2003]),
        ("schedule.id=2001", [2001]),
        ("schedule.id=0.2001", [2001]),
        ("schedule.id=gt:0.0.2001&schedule.id=lte:2003", [2002, 2003]),
        ("schedule.id=2001&schedule.id=2002", []),
        ("schedule.id=gte:2002&order=desc&limit=2", [2004, 2003]),
        ("account.id=0x0000000000000000000000000000000000000d05", [2002, 2003]),
    ],
)
def test_filters(schedules: TestClient, query: str, expected: list[int]) -> None:
    assert ids(schedules.get(f"{URL}?{query}")) == [f"0.0.{n}" for n in expected]


@pytest.mark.parametrize("probe", [True, False])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pagination_to_the_end(schedules: TestClient, api_settings: Settings, probe: bool, order: str) -> None:
    reconfigure(schedules, dataclasses.replace(api_settings, pagination_probe=probe))
    url, seen = f"{URL}?limit=2&order={order}", []
    while url:
        response = schedules.get(url)
        seen += ids(response)
        url = response.json()["links"]["next"]
    expected = [f"0.0.{n}" for n in range(2000, 2005)]
    assert seen == (expected if order == "asc" else expected[::-1])
    assert (
        schedules.get(f"{URL}?limit=2").json()["links"]["next"]
        == "/api/v1/schedules?limit=2&schedule.id=gt:0.0.2001"
    )


@pytest.mark.parametrize(
    ("num", "now", "max_age"),
    [
        (2000, T0, 3600),  # executed
        (2001, T0, 3600),  # deleted
        (2002, T0 + 10 * MINUTE + 59_000_000_000, 1),  # pending until a minute after its expiration
        (2002, T0 + 11 * MINUTE, 3600),
        (2004, T0 + 30 * MINUTE, 1),  # no expiration time: 31 minutes after creation
        (2004, T0 + 31 * MINUTE + 2004, 3600),
    ],
)
def test_one_schedule_and_its_cache_rule(
    schedules: TestClient, api_settings: Settings, num: int, now: int, max_age: int
) -> None:
    ctx = reconfigure(schedules, api_settings)
    ctx.clock = FixedClock(now)
    response = schedules.get(f"{URL}/0.0.{num}")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == f"public, max-age={max_age}"
    listed = {s["schedule_id"]: s for s in schedules.get(URL).json()["schedules"]}
    assert response.json() == listed[f"0.0.{num}"]


def test_not_found(schedules: TestClient) -> None:
    for path in ("0.0.2999", "1024", "0.0.3333"):
        response = schedules.get(f"{URL}/{path}")
        assert response.status_code == 404
        assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{URL}?crypto=true", ["Unknown query parameter: crypto"]),
        (f"{URL}?account.id=abc", ["Invalid parameter: account.id"]),
        (f"{URL}?schedule.id=0x0000000000000000000000000000000000000d05", ["Invalid parameter: schedule.id"]),
        (f"{URL}?schedule.id=%00", ["Invalid parameter: schedule.id"]),
        (f"{URL}?limit=-1&order=sideways", ["Invalid parameter: limit", "Invalid parameter: order"]),
        (f"{URL}/0.7.8.9", ["Invalid parameter: scheduleid"]),
        (f"{URL}/0x0000000000000000000000000000000000000d05", ["Invalid parameter: scheduleid"]),
        (f"{URL}/2000%00", ["Invalid parameter: scheduleid"]),
        (f"{URL}/0.0.2000?account.id=3333", ["Unknown query parameter: account.id"]),
    ],
)
def test_bad_input(client: TestClient, url: str, expected: list[str]) -> None:
    response = client.get(url)
    assert response.status_code == 400, response.text
    assert messages(response) == expected


SIGNATURE_LENGTHS = (0, 1, 56, 57, 58, 64, 114, 200)
"""Around PostgreSQL's 57-byte base64 line: a 64-byte signature (ED25519, ECDSA) spans two lines."""


def _long_signatures(ledger: Ledger) -> list[bytes]:
    """Schedule 0.0.2000 signed with signatures and prefixes of every length above."""
    signatures = [bytes((7 + i) % 256 for i in range(n)) for n in SIGNATURE_LENGTHS]
    ledger.load(
        {
            "entities": [{"num": 2000, "type": "SCHEDULE"}],
            "schedules": [schedule(2000)],
            "transactionsignatures": [
                {
                    "consensus_timestamp": str(T0 + 1 + index),
                    "public_key_prefix": list(signature[::-1]),
                    "entity_id": "0.0.2000",
                    "signature": list(signature),
                    "type": 3,
                }
                for index, signature in enumerate(signatures)
            ],
        }
    )
    return signatures


def test_signatures_are_base64_as_postgresql_encodes_them(client: TestClient, ledger: Ledger) -> None:
    """The reference renders both fields with ``encode(..., 'base64')`` in its query: the expected text is what
    the database itself writes for the same bytes."""
    _long_signatures(ledger)
    encoded_by_postgresql = fetch(
        ledger.url,
        "select encode(public_key_prefix, 'base64') as prefix, encode(signature, 'base64') as signature"
        " from transaction_signature order by consensus_timestamp",
    )
    expected = [(row["prefix"], row["signature"]) for row in encoded_by_postgresql]
    assert sum("\n" in signature for _, signature in expected) == 5  # 57, 58, 64, 114 and 200 bytes
    one = client.get(f"{URL}/0.0.2000").json()
    listed = client.get(URL).json()["schedules"][0]
    for body in (one, listed):
        assert [(s["public_key_prefix"], s["signature"]) for s in body["signatures"]] == expected
    by_length = dict(zip(SIGNATURE_LENGTHS, [s["signature"] for s in one["signatures"]], strict=True))
    assert by_length[64].count("\n") == 1 and by_length[64].index("\n") == 76
    assert by_length[57].endswith("\n") and by_length[56].count("\n") == 0


def test_plain_base64_signatures_setting(client: TestClient, ledger: Ledger, api_settings: Settings) -> None:
    signatures = _long_signatures(ledger)
    reconfigure(client, dataclasses.replace(api_settings, schedule_signature_plain_base64=True))
    expected = [
        (base64.b64encode(signature[::-1]).decode(), base64.b64encode(signature).decode())
        for signature in signatures
    ]
    for body in (client.get(f"{URL}/0.0.2000").json(), client.get(URL).json()["schedules"][0]):
        assert [(s["public_key_prefix"], s["signature"]) for s in body["signatures"]] == expected
