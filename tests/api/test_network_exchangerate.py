"""GET /api/v1/network/exchangerate: file 0.0.112 versions, appends, fallback, the timestamp window, errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import APPEND, CREATE, UPDATE, file_rows, reference_schema_errors
from tests.hapi_files import CORRUPT, rate_file
from tests.support import Ledger, reconfigure

from ledgermirror.api.resources.network import system_files
from ledgermirror.settings import Settings

URL = "/api/v1/network/exchangerate"
T0 = 1_700_000_000_000_000_000
"""A base consensus timestamp; files below are at T0 + small offsets."""


def ts(offset: int) -> str:
    """The wire form of T0 + offset nanoseconds."""
    value = T0 + offset
    return f"{value // 1_000_000_000}.{value % 1_000_000_000:09d}"


def rates(cent: int) -> bytes:
    """A file whose current rate's cent equivalent identifies it."""
    return rate_file((30000, cent, 1700000100), (30000, cent + 1, 1700003700))


def cents(response: Any) -> int:
    assert response.status_code == 200, response.text
    return int(response.json()["current_rate"]["cent_equivalent"])


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_latest_file(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": file_rows(112, (T0, rates(100), CREATE), (T0 + 10, rates(200), UPDATE))})
    response = client.get(URL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=60"
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert body == {
        "current_rate": {"cent_equivalent": 200, "expiration_time": 1700000100, "hbar_equivalent": 30000},
        "next_rate": {"cent_equivalent": 201, "expiration_time": 1700003700, "hbar_equivalent": 30000},
        "timestamp": ts(10),
    }
    assert list(body) == ["current_rate", "next_rate", "timestamp"]
    assert list(body["current_rate"]) == ["cent_equivalent", "expiration_time", "hbar_equivalent"]
    assert reference_schema_errors(URL, body) == []


def test_contents_split_over_appends(client: TestClient, ledger: Ledger) -> None:
    data = rates(300)
    ledger.load(
        {
            "filedata": file_rows(
                112, (T0, data[:5], CREATE), (T0 + 1, data[5:20], APPEND), (T0 + 2, data[20:], APPEND)
            )
        }
    )
    response = client.get(URL)
    assert cents(response) == 300
    assert response.json()["timestamp"] == ts(2)  # the last chunk's timestamp


def test_empty_update_is_not_a_new_version(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": file_rows(112, (T0, rates(100), CREATE), (T0 + 5, b"", UPDATE))})
    response = client.get(URL)
    assert cents(response) == 100
    assert response.json()["timestamp"] == ts(0)


def test_other_files_and_the_configured_realm(client: TestClient, ledger: Ledger, api_settings: Settings) -> None:
    ledger.load(
        {
            "filedata": file_rows(112, (T0, rates(100), CREATE))
            + file_rows(111, (T0 + 1, rates(999), CREATE))
            + file_rows("0.1.112", (T0 + 2, rates(500), CREATE))
        }
    )
    assert cents(client.get(URL)) == 100
    reconfigure(client, dataclasses.replace(api_settings, realm=1))
    assert cents(client.get(URL)) == 500
    reconfigure(client, dataclasses.replace(api_settings, realm=2))
    assert messages(client.get(URL)) == ["Not found"]


def test_missing_rates_and_expiry_are_null(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": file_rows(112, (T0, rate_file((1, 12, None), None), CREATE))})
    body = client.get(URL).json()
    assert body["current_rate"] == {"cent_equivalent": 12, "expiration_time": None, "hbar_equivalent": 1}
    assert body["next_rate"] is None


def test_empty_file_decodes_to_no_rates(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": file_rows(112, (T0, b"", CREATE))})
    assert client.get(URL).json() == {"current_rate": None, "next_rate": None, "timestamp": ts(0)}


def test_fallback_past_a_corrupt_newest_version(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "filedata": file_rows(
                112,
                (T0, rates(100), CREATE),
                (T0 + 10, rates(200)[:3], UPDATE),  # truncated: does not decode
                (T0 + 20, CORRUPT, APPEND),
            )
        }
    )
    response = client.get(URL)
    assert cents(response) == 100
    assert response.json()["timestamp"] == ts(0)
    assert client.get(URL + f"?timestamp=gt:{ts(0)}").status_code == 404


def test_fallback_drops_a_corrupt_append_first(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": file_rows(112, (T0, rates(100), CREATE), (T0 + 10, CORRUPT, APPEND))})
    response = client.get(URL)
    assert cents(response) == 100
    assert response.json()["timestamp"] == ts(0)


@pytest.mark.parametrize(
    ("corrupt", "status"), [(system_files.MAX_FILE_ATTEMPTS - 1, 200), (system_files.MAX_FILE_ATTEMPTS, 404)]
)
def test_fallback_gives_up_after_max_attempts(
    client: TestClient, ledger: Ledger, corrupt: int, status: int
) -> None:
    rows = [(T0 + 100 + index, CORRUPT, UPDATE) for index in range(corrupt)]
    ledger.load({"filedata": file_rows(112, (T0, rates(100), CREATE), *rows)})
    response = client.get(URL)
    assert response.status_code == status
    if status == 404:
        assert messages(response) == ["Not found"]


def test_not_found(client: TestClient, ledger: Ledger) -> None:
    response = client.get(URL)
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}
    assert "cache-control" not in response.headers
    ledger.load({"filedata": file_rows(112, (T0, CORRUPT, CREATE))})
    assert client.get(URL).status_code == 404
    ledger.load({"filedata": file_rows(112, (T0 + 1, rates(100)[:4], APPEND))})  # append only: still not readable
    assert client.get(URL).status_code == 404


FILES = file_rows(112, (T0, rates(0), CREATE), (T0 + 10, rates(1), UPDATE), (T0 + 20, rates(2), UPDATE))
F0, F1, F2 = ts(0), ts(10), ts(20)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"timestamp={F1}", 1),
        (f"timestamp={F2}", 2),
        (f"timestamp=eq:{F0}", 0),
        (f"timestamp=eq:{F1}", 1),
        (f"timestamp=eq:{F2}", 2),
        (f"timestamp=gt:{F0}", 2),
        (f"timestamp=gt:{F1}", 2),
        (f"timestamp=gte:{F1}", 2),
        (f"timestamp=gte:{F2}", 2),
        (f"timestamp=lt:{F1}", 0),
        (f"timestamp=lt:{F2}", 1),
        (f"timestamp=lte:{F1}", 1),
        (f"timestamp=gt:{F0}&timestamp=eq:{F2}", 2),
        (f"timestamp=eq:{F1}&timestamp=eq:{F2}", 2),
        (f"timestamp=lt:{F0}&timestamp=eq:{F2}", 2),  # the last upper bound wins
        (f"timestamp=gt:{F0}&timestamp=lt:{F2}", 1),
        (f"timestamp=gte:{F1}&timestamp=lt:{F2}", 1),
        (f"timestamp=gte:{F1}&timestamp=lte:{F1}", 1),
        (f"timestamp=gt:{F0}&timestamp=lte:{F1}", 1),
        (f"timestamp={ts(15)}", 1),
        ("timestamp=1700000000.00000001", 1),  # right-padded: 10 ns
        ("timestamp=1800000000", 2),
        ("TIMESTAMP=1700000000.000000005", 0),
    ],
)
def test_timestamp(client: TestClient, ledger: Ledger, query: str, expected: int) -> None:
    ledger.load({"filedata": FILES})
    response = client.get(f"{URL}?{query}")
    assert cents(response) == expected
    assert response.json()["timestamp"] == [F0, F1, F2][expected]


@pytest.mark.parametrize(
    "query",
    [
        f"timestamp=lt:{F0}",
        "timestamp=1699999999",
        f"timestamp=gt:{F2}",
        f"timestamp=gt:{F1}&timestamp=lt:{F2}",
        f"timestamp=gt:{F2}&timestamp=lt:{F0}",
    ],
)
def test_timestamp_not_found(client: TestClient, ledger: Ledger, query: str) -> None:
    ledger.load({"filedata": FILES})
    response = client.get(f"{URL}?{query}")
    assert response.status_code == 404
    assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("timestamp=cof%00fee", ["Invalid parameter: timestamp"]),
        ("timestamp=test", ["Invalid parameter: timestamp"]),
        ("timestamp=<script>alert(1)</script>", ["Invalid parameter: timestamp"]),
        ("timestamp=1.2.3", ["Invalid parameter: timestamp"]),
        ("timestamp=1.1234567890", ["Invalid parameter: timestamp"]),
        ("timestamp=123456789012345678", ["Invalid parameter: timestamp"]),
        ("timestamp=-1", ["Invalid parameter: timestamp"]),
        ("timestamp=", ["Invalid parameter: timestamp"]),
        ("timestamp=GT:1", ["Invalid parameter: timestamp"]),
        ("timestamp=gt:lt:1", ["Invalid parameter: timestamp"]),
        ("timestamp=foo:1", ["Invalid parameter: timestamp"]),
        ("timestamp=ne:4", ["Not equals (ne) operator is not supported for timestamp"]),
        ("timestamp=gt:1&timestamp=ne:4", ["Not equals (ne) operator is not supported for timestamp"]),
        (
            "timestamp=1&timestamp=2&timestamp=3",
            ["Parameter values count exceeds maximum number allowed: timestamp count: 3 max: 2"],
        ),
        (
            "timestamp=test&limit=c&order=d",
            [
                "Invalid parameter: timestamp",
                "Unknown query parameter: limit",
                "Unknown query parameter: order",
            ],
        ),
        ("foo=1", ["Unknown query parameter: foo"]),
    ],
)
def test_bad_input(client: TestClient, ledger: Ledger, query: str, expected: list[str]) -> None:
    ledger.load({"filedata": FILES})
    response = client.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
