"""GET /api/v1/network/fees: schedule and rate selection, gas pricing, order, the timestamp window, errors."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import CREATE, UPDATE, file_rows, reference_schema_errors
from tests.hapi_files import CORRUPT, fee_file, rate_file
from tests.support import Ledger

from ledgermirror.api.resources.network.network_fees import tinybars
from ledgermirror.ledger.system_files import Rate

URL = "/api/v1/network/fees"
SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
RATE_EXPIRY = 1_700_000_500
SCHEDULE_EXPIRY = 1_700_001_000
CALL, CREATE_CONTRACT, ETHEREUM = 6, 7, 84

CURRENT = [(ETHEREUM, 953000), (CALL, 852000), (CREATE_CONTRACT, 1068000)]
NEXT = [(CALL, 1704000), (ETHEREUM, 1906000)]
RATES = rate_file((1, 12, RATE_EXPIRY), (1, 15, RATE_EXPIRY + 3600))
SCHEDULES = fee_file((CURRENT, SCHEDULE_EXPIRY), (NEXT, SCHEDULE_EXPIRY + 86400))

AT_CURRENT = [
    {"gas": 71, "transaction_type": "ContractCall"},
    {"gas": 89, "transaction_type": "ContractCreate"},
    {"gas": 79, "transaction_type": "EthereumTransaction"},
]
AT_NEXT_RATE = [
    {"gas": 56, "transaction_type": "ContractCall"},
    {"gas": 71, "transaction_type": "ContractCreate"},
    {"gas": 63, "transaction_type": "EthereumTransaction"},
]
AT_NEXT_SCHEDULE = [
    {"gas": 113, "transaction_type": "ContractCall"},
    {"gas": 127, "transaction_type": "EthereumTransaction"},
]


def ts(nanos: int) -> str:
    return f"{nanos // SECOND}.{nanos % SECOND:09d}"


def setup(ledger: Ledger, schedules: bytes = SCHEDULES, rates: bytes = RATES) -> None:
    ledger.load({"filedata": file_rows(112, (T0, rates, CREATE)) + file_rows(111, (T0 + 10, schedules, CREATE))})


def fees(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return list(response.json()["fees"])


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_fees(client: TestClient, ledger: Ledger) -> None:
    setup(ledger)
    response = client.get(URL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=60"
    body = response.json()
    assert body == {"fees": AT_CURRENT, "timestamp": ts(T0 + 10)}
    assert list(body) == ["fees", "timestamp"]
    assert list(body["fees"][0]) == ["gas", "transaction_type"]
    assert reference_schema_errors(URL, body) == []


@pytest.mark.parametrize(
    ("query", "reverse"), [("order=asc", False), ("order=ASC", False), ("order=desc", True), ("order=Desc", True)]
)
def test_order(client: TestClient, ledger: Ledger, query: str, reverse: bool) -> None:
    setup(ledger)
    assert fees(client.get(f"{URL}?{query}")) == (AT_CURRENT[::-1] if reverse else AT_CURRENT)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", AT_CURRENT),  # reference time: the fee file's timestamp
        (f"timestamp=gte:{ts(T0)}", AT_CURRENT),  # no upper bound: the fee file's timestamp
        (f"timestamp={ts(T0 + 10)}", AT_CURRENT),
        (f"timestamp={RATE_EXPIRY}", AT_CURRENT),  # not past the expiry
        (f"timestamp={RATE_EXPIRY}.000000001", AT_NEXT_RATE),
        (f"timestamp=lt:{RATE_EXPIRY}.000000002", AT_NEXT_RATE),  # lt is lte one ns earlier
        (f"timestamp=lt:{RATE_EXPIRY}.000000001", AT_CURRENT),
        (f"timestamp=lte:{SCHEDULE_EXPIRY}", AT_NEXT_RATE),
        (f"timestamp=eq:{SCHEDULE_EXPIRY + 1}", AT_NEXT_SCHEDULE),
        (f"timestamp=gte:{ts(T0)}&timestamp=lt:{SCHEDULE_EXPIRY + 1}", AT_NEXT_SCHEDULE),
    ],
)
def test_reference_time_picks_schedule_and_rate(
    client: TestClient, ledger: Ledger, query: str, expected: list[dict[str, Any]]
) -> None:
    setup(ledger)
    response = client.get(f"{URL}?{query}")
    assert fees(response) == expected
    assert response.json()["timestamp"] == ts(T0 + 10)


def test_missing_expiries_count_as_expired(client: TestClient, ledger: Ledger) -> None:
    setup(ledger, schedules=fee_file((CURRENT, None), (NEXT, None)), rates=rate_file((1, 12, None), (1, 15, None)))
    assert fees(client.get(URL)) == AT_NEXT_SCHEDULE


def test_missing_schedules_and_rates(client: TestClient, ledger: Ledger) -> None:
    setup(ledger, schedules=fee_file((CURRENT, None), None))
    assert fees(client.get(URL)) == []  # expired current, no next schedule
    ledger.reset()
    setup(ledger, rates=rate_file(None, None))
    assert fees(client.get(URL)) == []  # no rate: nothing can be priced
    ledger.reset()
    setup(ledger, schedules=b"")
    assert client.get(URL).json() == {"fees": [], "timestamp": ts(T0 + 10)}


def test_only_contract_types_with_service_gas(client: TestClient, ledger: Ledger) -> None:
    entries = [(14, 5000000), (CALL, None), (CREATE_CONTRACT, 24000), (ETHEREUM, 1), (CALL, 852000), (CALL, 12000)]
    setup(ledger, schedules=fee_file((entries, SCHEDULE_EXPIRY), None))
    assert fees(client.get(URL)) == [
        {"gas": 71, "transaction_type": "ContractCall"},  # a repeated type is priced again, in file order
        {"gas": 1, "transaction_type": "ContractCall"},
        {"gas": 2, "transaction_type": "ContractCreate"},
        {"gas": 1, "transaction_type": "EthereumTransaction"},  # never below 1
    ]


def test_zero_cent_equivalent_drops_every_entry(client: TestClient, ledger: Ledger) -> None:
    setup(ledger, rates=rate_file((30000, 0, RATE_EXPIRY), None))
    assert fees(client.get(URL)) == []


@pytest.mark.parametrize(
    ("gas", "hbar", "cent", "expected"),
    [
        (852000, 1, 12, 71),
        (852000, 30000, 851000, 30),
        (1701999, 30000, 851000, 59),
        (1, 30000, 851000, 1),
        (0, 1, 1, 1),
        (999, 1, 1, 1),
        (-5000, 1, 1, 1),
        (10_000_000_000_000_000, 30000, 1, 300_000_000_000_000_000),
        (852000, 1, 0, None),
    ],
)
def test_tinybars(gas: int, hbar: int, cent: int, expected: int | None) -> None:
    assert tinybars(gas, Rate(hbar, cent, None)) == expected


def test_fallback_past_a_corrupt_newest_schedule(client: TestClient, ledger: Ledger) -> None:
    setup(ledger)
    ledger.load({"filedata": file_rows(111, (T0 + 20, CORRUPT, UPDATE))})
    response = client.get(URL)
    assert fees(response) == AT_CURRENT
    assert response.json()["timestamp"] == ts(T0 + 10)


def test_not_found(client: TestClient, ledger: Ledger) -> None:
    response = client.get(URL)
    assert response.status_code == 404
    assert messages(response) == ["Not found"]  # the fee schedule is looked for first
    ledger.load({"filedata": file_rows(112, (T0, RATES, CREATE))})
    assert messages(client.get(URL)) == ["Not found"]
    ledger.reset()
    ledger.load({"filedata": file_rows(111, (T0, SCHEDULES, CREATE))})
    assert messages(client.get(URL)) == ["Not found"]
    ledger.load({"filedata": file_rows(112, (T0 + 5, CORRUPT, CREATE))})
    response = client.get(URL)
    assert response.status_code == 404
    assert messages(response) == ["Not found"]  # no readable exchange rate


def test_both_files_share_the_window(client: TestClient, ledger: Ledger) -> None:
    setup(ledger)
    assert messages(client.get(f"{URL}?timestamp=lt:{ts(T0 + 10)}")) == ["Not found"]
    assert messages(client.get(f"{URL}?timestamp=gte:{ts(T0 + 5)}")) == ["Not found"]
    ledger.load({"filedata": file_rows(112, (T0 + 20, RATES, UPDATE))})
    response = client.get(f"{URL}?timestamp=gte:{ts(T0 + 5)}")
    assert fees(response) == AT_CURRENT
    assert response.json()["timestamp"] == ts(T0 + 10)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("timestamp=cof%00fee", ["Invalid parameter: timestamp"]),
        ("timestamp=test", ["Invalid parameter: timestamp"]),
        ("timestamp=1.1234567890", ["Invalid parameter: timestamp"]),
        ("timestamp=ne:4", ["Not equals (ne) operator is not supported for timestamp"]),
        (
            "timestamp=1&timestamp=2&timestamp=3",
            ["Parameter values count exceeds maximum number allowed: timestamp count: 3 max: 2"],
        ),
        ("order=d", ["Invalid parameter: order"]),
        ("order=", ["Invalid parameter: order"]),
        ("order=eq:asc", ["Invalid parameter: order"]),
        (
            "timestamp=test&limit=c&order=d",
            ["Invalid parameter: timestamp", "Invalid parameter: order", "Unknown query parameter: limit"],
        ),
        ("limit=1", ["Unknown query parameter: limit"]),
    ],
)
def test_bad_input(client: TestClient, ledger: Ledger, query: str, expected: list[str]) -> None:
    setup(ledger)
    response = client.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
