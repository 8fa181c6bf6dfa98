"""GET /api/v1/contracts/{contractIdOrAddress}/state: current slots, slots rebuilt from state changes at a
timestamp, every parameter, pagination and bad input (4xx, never 500)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/contracts/5001/state"
ADDRESS = "25fe26adc577cc89172e6156c9e24f7b9751b762"


def word(value: int) -> str:
    return "0x" + format(value, "064x")


def change(at: int, contract: int, slot: str, read: str, written: str | None) -> dict[str, Any]:
    return {"consensus_timestamp": at, "contract_id": contract, "slot": slot, "value_read": read,
            "value_written": written}  # fmt: skip


def current(contract: int, slot: int, value: str, modified: int) -> dict[str, Any]:
    return {"contract_id": contract, "slot": word(slot)[2:], "value": value, "modified_timestamp": modified}


SETUP: dict[str, Any] = {
    "contracts": [{"num": 5001, "evm_address": ADDRESS}, {"num": 5002}],
    "contractStates": [current(5001, slot, word(slot * 16), 100 + slot) for slot in (1, 2, 0x2D)]
    + [current(5002, 1, "0x07", 50)],
    "contractStateChanges": [
        change(10, 5001, "", "0x00", "0x01"),  # slot 0, stored empty
        change(10, 5001, "02", "0x00", "0x02"),
        change(10, 5001, "03", "0x00", "0x03"),
        change(20, 5001, "03", "0x03", "0x33"),
        change(30, 5001, "02", "0x05", None),  # a read
        change(30, 5002, "02", "0x00", "0x09"),
    ],
}


@pytest.fixture
def state(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    return client


def slots(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(item["slot"], item["value"], item["timestamp"]) for item in body["state"]]


def test_current_state_fields_and_cache(state: TestClient) -> None:
    response = state.get(URL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=1"
    body = response.json()
    assert body["state"][0] == {
        "address": "0x" + ADDRESS,
        "contract_id": "0.0.5001",
        "timestamp": "0.000000101",
        "slot": word(1),
        "value": word(16),
    }
    assert slots(body) == [
        (word(1), word(0x10), "0.000000101"),
        (word(2), word(0x20), "0.000000102"),
        (word(0x2D), word(0x2D0), "0.000000145"),
    ]
    assert body["links"] == {"next": None}
    other = state.get("/api/v1/contracts/0.0.5002/state").json()["state"]
    assert [(item["address"], item["value"]) for item in other] == [("0x" + "0" * 36 + "138a", word(7))]
    assert reference_schema_errors("/api/v1/contracts/{contractIdOrAddress}/state", body) == []


@pytest.mark.parametrize(
    "path",
    ["5001", "0.5001", "0.0.5001", "0x0000000000000000000000000000000000001389", "0.0." + ADDRESS, "0x" + ADDRESS],
)
def test_contract_forms(state: TestClient, path: str) -> None:
    response = state.get(f"/api/v1/contracts/{path}/state")
    assert response.status_code == 200
    assert len(response.json()["state"]) == 3


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("slot=2", [2]),
        ("slot=0x02", [2]),
        ("slot=eq:" + word(2), [2]),
        ("slot=2d&slot=1", [1, 0x2D]),
        ("slot=gt:1", [2, 0x2D]),
        ("slot=gte:0x2", [2, 0x2D]),
        ("slot=lt:2", [1]),
        ("slot=lte:2&slot=gt:1", [2]),
        ("slot=lt:0x2d&slot=2&slot=1", [1, 2]),
        ("order=desc", [0x2D, 2, 1]),
        ("slot=gt:" + "f" * 64, []),
    ],
)
def test_current_state_filters(state: TestClient, query: str, expected: list[int]) -> None:
    response = state.get(f"{URL}?{query}")
    assert response.status_code == 200, response.text
    assert [item["slot"] for item in response.json()["state"]] == [word(slot) for slot in expected]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # each slot's newest change at or before: slot 0 is stored empty; a read keeps the value read
        ("timestamp=0.000000030", [(0, 1, 10), (2, 5, 30), (3, 0x33, 20)]),
        ("timestamp=lte:0.000000015", [(0, 1, 10), (2, 2, 10), (3, 3, 10)]),
        ("timestamp=lt:0.000000030", [(0, 1, 10), (2, 2, 10), (3, 0x33, 20)]),
        ("timestamp=gt:0.000000010", [(2, 5, 30), (3, 0x33, 20)]),
        ("timestamp=gte:0.000000010&timestamp=lt:0.000000020", [(0, 1, 10), (2, 2, 10), (3, 3, 10)]),
        ("timestamp=0.000000030&slot=3", [(3, 0x33, 20)]),
        ("timestamp=0.000000030&slot=0x0003", [(3, 0x33, 20)]),
        ("timestamp=0.000000030&slot=" + word(3), [(3, 0x33, 20)]),
        ("timestamp=0.000000030&slot=gt:1", [(2, 5, 30), (3, 0x33, 20)]),
        ("timestamp=0.000000030&slot=lte:2", [(0, 1, 10), (2, 5, 30)]),
        ("timestamp=0.000000030&order=desc", [(3, 0x33, 20), (2, 5, 30), (0, 1, 10)]),
        ("timestamp=0.000000009", []),
    ],
)
def test_state_at_a_timestamp(state: TestClient, query: str, expected: list[tuple[int, int, int]]) -> None:
    response = state.get(f"{URL}?{query}")
    assert response.status_code == 200, response.text
    assert slots(response.json()) == [(word(slot), word(value), f"0.{at:09d}") for slot, value, at in expected]


@pytest.mark.parametrize("probe", [False, True])
def test_pages_to_the_end(state: TestClient, api_settings: Settings, probe: bool) -> None:
    reconfigure(state, dataclasses.replace(api_settings, pagination_probe=probe))
    first = state.get(f"{URL}?limit=1").json()
    assert first["links"]["next"] == f"{URL}?limit=1&slot=gt:{word(1)}"
    for order, expected in (("asc", [1, 2, 0x2D]), ("desc", [0x2D, 2, 1])):
        seen: list[str] = []
        url: str | None = f"{URL}?limit=1&order={order}"
        while url is not None:
            body = state.get(url).json()
            seen += [item["slot"] for item in body["state"]]
            url = body["links"]["next"]
            assert len(seen) <= 4
        assert seen == [word(slot) for slot in expected]
    # a full page whose next bound would cross the given one has no next link
    assert state.get(f"{URL}?limit=2&slot=lte:02").json()["links"]["next"] is None


@pytest.mark.parametrize(
    "path",
    [
        "5005/state",
        "0.0.5002/state?slot=5",
        "5001/state?timestamp=0.000000030&slot=4",
        "5002/state?order=desc&slot=9",
    ],
)
def test_empty_state(state: TestClient, path: str) -> None:
    response = state.get(f"/api/v1/contracts/{path}")  # an unknown id is not checked: an empty list
    assert response.status_code == 200
    assert response.json() == {"state": [], "links": {"next": None}}


def test_unknown_create2_address_is_not_found(state: TestClient) -> None:
    response = state.get("/api/v1/contracts/0x5e17c988cc14ae5f0bf328245eaf88f081c3a614/state")
    assert response.status_code == 404
    message = "No contract with the given evm address 0x5e17c988cc14ae5f0bf328245eaf88f081c3a614 has been found."
    assert response.json() == {"_status": {"messages": [{"message": message}]}}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("abc/state", "Invalid parameter: contractid"),
        ("1.2.3.4/state", "Invalid parameter: contractid"),
        ("%00/state", "Invalid parameter: contractid"),
        ("5001/state?slot=ne:1", "Invalid parameter: slot"),
        ("5001/state?slot=xyz", "Invalid parameter: slot"),
        ("5001/state?slot=" + "1" * 65, "Invalid parameter: slot"),
        ("5001/state?slot=0x", "Invalid parameter: slot"),
        ("5001/state?slot=%00", "Invalid parameter: slot"),
        ("5001/state?timestamp=ne:1", "Not equals (ne) operator is not supported for timestamp"),
        ("5001/state?timestamp=abc", "Invalid parameter: timestamp"),
        ("5001/state?timestamp=1%00", "Invalid parameter: timestamp"),
        ("5001/state?limit=-1", "Invalid parameter: limit"),
        ("5001/state?order=sideways", "Invalid parameter: order"),
        ("5001/state?index=1", "Unknown query parameter: index"),
        (
            "0x5e17c988cc14ae5f0bf328245eaf88f081c3a614/state?slot=x",
            "Invalid parameter: slot",
        ),  # before the lookup
    ],
)
def test_bad_input(state: TestClient, path: str, message: str) -> None:
    response = state.get(f"/api/v1/contracts/{path}")
    assert response.status_code == 400, response.text
    assert response.json()["_status"]["messages"][0]["message"] == message
