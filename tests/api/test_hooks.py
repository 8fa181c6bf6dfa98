"""GET /api/v1/accounts/{id}/hooks and /hooks/{hookId}/storage against a real PostgreSQL: the hook and slot
objects, hook.id and key sets and bounds, storage as of a timestamp, next links followed to the end, and every
bad input."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

BASE = "/api/v1/accounts/0.0.1001/hooks"
STORAGE = f"{BASE}/1/storage"
EVM = "ebb9a1be370150759408cd7af48e9eda2b8ead57"
SLOTS = {1: (b"\x05", 20, False), 2: (b"", 30, True), 3: (b"\x01\x00", 40, False)}
CHANGES = ((1, 10, b"\x04"), (1, 20, b"\x05"), (2, 10, b"\x09"), (2, 30, None), (3, 40, b"\x01\x00"))


def _key(number: int) -> bytes:
    return number.to_bytes(32, "big")


def _hex(value: str) -> str:
    return "0x" + value.rjust(64, "0")


@pytest.fixture
def hooks(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"accounts": [{"num": 1001, "evm_address": EVM}]})
    for hook_id in (1, 2, 3, 5):
        ledger.execute(
            "insert into hook (owner_id, hook_id, contract_id, created_timestamp, deleted, admin_key, "
            "timestamp_range) values (1001, $1, 4000, $2, $3, $4, int8range($2, null))",
            hook_id,
            100 + hook_id,
            hook_id == 3,
            b"\x12\x20" + bytes(range(32)),
        )
    ledger.execute("insert into hook (owner_id, hook_id) values (1002, 1)")
    for number, (value, modified, deleted) in SLOTS.items():
        ledger.execute(
            "insert into hook_storage (owner_id, hook_id, key, value, created_timestamp, modified_timestamp, "
            "deleted) values (1001, 1, $1, $2, 10, $3, $4)",
            _key(number),
            value,
            modified,
            deleted,
        )
    for number, at, written in CHANGES:
        ledger.execute(
            "insert into hook_storage_change (owner_id, hook_id, key, consensus_timestamp, value_read, "
            "value_written, deleted) values (1001, 1, $1, $2, '', $3, $4)",
            _key(number),
            at,
            written,
            written is None,
        )
    return client


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["hook_id"] for item in response.json()["hooks"]]


def slots(response: Any) -> list[tuple[int, str | None]]:
    assert response.status_code == 200, response.text
    return [(int(item["key"], 16), item["value"]) for item in response.json()["storage"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_hook_object(hooks: TestClient) -> None:
    response = hooks.get(f"{BASE}?hook.id=1")
    assert response.headers["cache-control"] == "public, max-age=1"
    assert response.json() == {
        "hooks": [{
            "admin_key": {"_type": "ED25519", "key": bytes(range(32)).hex()}, "contract_id": "0.0.4000",
            "created_timestamp": "0.000000101", "deleted": False, "extension_point": "ACCOUNT_ALLOWANCE_HOOK",
            "hook_id": 1, "owner_id": "0.0.1001", "timestamp_range": {"from": "0.000000101", "to": None},
            "type": "EVM",
        }],
        "links": {"next": None},
    }  # fmt: skip
    assert hooks.get("/api/v1/accounts/1002/hooks").json()["hooks"][0]["timestamp_range"] is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [5, 3, 2, 1]),
        ("order=asc", [1, 2, 3, 5]),
        ("hook.id=2&hook.id=5", [5, 2]),
        ("hook.id=gt:1&hook.id=lt:5", [3, 2]),
        ("hook.id=gte:2&hook.id=1&hook.id=3", [3]),
        ("hook.id=lt:1&hook.id=1", []),
        ("hook.id=ne:2", [5, 3, 2, 1]),
        ("hook.id=gt:9223372036854775807", []),
    ],
)
def test_hook_filters(hooks: TestClient, query: str, expected: list[int]) -> None:
    assert ids(hooks.get(f"{BASE}?{query}")) == expected


@pytest.mark.parametrize("path", ["1001", "0.0.1001", f"0x{EVM}"])
def test_owner_forms(hooks: TestClient, path: str) -> None:
    assert ids(hooks.get(f"/api/v1/accounts/{path}/hooks")) == [5, 3, 2, 1]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [(1, _hex("05")), (3, _hex("0100"))]),
        ("order=desc", [(3, _hex("0100")), (1, _hex("05"))]),
        ("key=3", [(3, _hex("0100"))]),
        ("key=eq:0x01&key=gt:0", [(1, _hex("05"))]),
        ("key=gt:1&key=lte:" + "0" * 63 + "3", [(3, _hex("0100"))]),
        ("key=lt:0", []),
        ("key=gt:" + "f" * 64, []),
        ("timestamp=0.000000015", [(1, _hex("04")), (2, _hex("09"))]),
        ("timestamp=lte:0.000000035", [(1, _hex("05")), (2, None)]),
        ("timestamp=gt:0.000000025&timestamp=lt:0.00000005", [(2, None), (3, _hex("0100"))]),
        ("timestamp=gt:0.00000005&timestamp=lt:0.00000004", []),
    ],
)
def test_storage_filters(hooks: TestClient, query: str, expected: list[tuple[int, str | None]]) -> None:
    response = hooks.get(f"{STORAGE}?{query}")
    assert slots(response) == expected
    assert response.json()["hook_id"] == 1 and response.json()["owner_id"] == "0.0.1001"


def test_storage_slot_and_unknown_hook(hooks: TestClient) -> None:
    first = hooks.get(STORAGE).json()["storage"][0]
    assert first == {"key": _hex("1"), "timestamp": "0.000000020", "value": _hex("05")}
    assert hooks.get(f"{BASE}/9/storage").json() == {
        "hook_id": 9, "owner_id": "0.0.1001", "storage": [], "links": {"next": None}
    }  # fmt: skip


@pytest.mark.parametrize(
    ("url", "read"),
    [(BASE, ids), (f"{BASE}?order=asc", ids), (STORAGE, slots), (f"{STORAGE}?timestamp=0.00000005", slots)],
)
@pytest.mark.parametrize("probe", [True, False])
def test_following_next_links(
    hooks: TestClient, api_settings: Settings, url: str, read: Callable[[Any], list[Any]], probe: bool
) -> None:
    reconfigure(hooks, dataclasses.replace(api_settings, pagination_probe=probe))
    whole = read(hooks.get(url))
    seen: list[Any] = []
    next_url: str | None = url + ("&" if "?" in url else "?") + "limit=1"
    while next_url:
        response = hooks.get(next_url)
        seen += read(response)
        next_url = response.json()["links"]["next"]
        assert len(seen) < 10
    assert seen == whole


@pytest.mark.parametrize(
    ("url", "status", "expected"),
    [
        (f"{BASE}?hook.id=-1", 400, ["Invalid parameter: hook.id"]),
        (f"{BASE}?hook.id=x&limit=0&order=up", 400,
         ["Invalid parameter: hook.id", "Invalid parameter: limit", "Invalid parameter: order"]),
        (f"{BASE}?hook.id=%00", 400, ["Invalid parameter: hook.id"]),
        (f"{BASE}?key=1", 400, ["Unknown query parameter: key"]),
        ("/api/v1/accounts/0x" + "ab" * 20 + "/hooks", 404, ["Not found"]),
        ("/api/v1/accounts/abc%00/hooks", 400, ["Invalid parameter: idOrAliasOrEvmAddress"]),
        (f"{BASE}/-1/storage", 400, ["Invalid parameter: hookId"]),
        (f"{BASE}/x%00/storage", 400, ["Invalid parameter: hookId"]),
        (f"{STORAGE}?key=xyz", 400, ["Invalid parameter: key"]),
        (f"{STORAGE}?key=" + "1" * 65, 400, ["Invalid parameter: key"]),
        (f"{STORAGE}?key=ne:1", 400, ["Invalid parameter: key"]),
        (f"{STORAGE}?timestamp=ne:1", 400, ["Invalid parameter: timestamp"]),
        (f"{STORAGE}?timestamp=1&timestamp=2&timestamp=3", 400,
         ["Parameter values count exceeds maximum number allowed: timestamp count: 3 max: 2"]),
        (f"{STORAGE}?hook.id=1", 400, ["Unknown query parameter: hook.id"]),
    ],
)  # fmt: skip
def test_bad_input(hooks: TestClient, url: str, status: int, expected: list[str]) -> None:
    response = hooks.get(url)
    assert response.status_code == status
    assert messages(response) == expected


def test_answers_match_the_reference_schema(hooks: TestClient) -> None:
    path = "/api/v1/accounts/{idOrAliasOrEvmAddress}/hooks"
    assert reference_openapi.schema_errors(path, hooks.get(BASE).json()) == []
    assert reference_openapi.schema_errors(f"{path}/{{hookId}}/storage", hooks.get(STORAGE).json()) == []
