"""GET /api/v1/blocks and /api/v1/blocks/{hashOrNumber}: encodings, every parameter, pagination, bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_system_files import reference_schema_errors
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

URL = "/api/v1/blocks"
SECOND = 1_000_000_000
T0 = 1_676_540_001 * SECOND
BLOOM = "00ff" + "00" * 253 + "01"


def block_hash(number: int) -> str:
    return f"{number:02x}" * 48


def end(number: int) -> int:
    return T0 + number * 1000


def record_file(number: int, **overrides: Any) -> dict[str, Any]:
    return {
        "index": number,
        "count": number * 10,
        "gas_used": number * 1000,
        "hapi_version_major": 0,
        "hapi_version_minor": 22,
        "hapi_version_patch": number,
        "name": f"2023-02-16T09_33_{number:02d}.000000000Z.rcd",
        "prev_hash": block_hash(number - 1) if number else "0" * 96,
        "consensus_start": end(number) - 500,
        "consensus_end": end(number),
        "hash": block_hash(number),
        "logs_bloom": BLOOM,
        "bytes": [1, 2, 3],
        **overrides,
    }


BLOCKS = [record_file(number) for number in range(1, 7)]


@pytest.fixture
def blocks(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"recordFiles": BLOCKS})
    return client


def numbers(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [block["number"] for block in response.json()["blocks"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def ts(nanos: int) -> str:
    return f"{nanos // SECOND}.{nanos % SECOND:09d}"


EXPECTED_3 = {
    "count": 30,
    "hapi_version": "0.22.3",
    "hash": "0x" + block_hash(3),
    "name": "2023-02-16T09_33_03.000000000Z.rcd",
    "number": 3,
    "previous_hash": "0x" + block_hash(2),
    "size": 3,
    "timestamp": {"from": ts(end(3) - 500), "to": ts(end(3))},
    "gas_used": 3000,
    "logs_bloom": "0x" + BLOOM,
}


def test_list_shape(blocks: TestClient) -> None:
    response = blocks.get(URL)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=1"
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert numbers(response) == [6, 5, 4, 3, 2, 1]  # newest first
    assert body["links"] == {"next": None}
    assert body["blocks"][3] == EXPECTED_3
    assert list(body["blocks"][3]) == list(EXPECTED_3)
    assert reference_schema_errors(URL, body) == []


def test_encodings(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "recordFiles": [
                record_file(1, bytes=None, size=8, logs_bloom=None, gas_used=-1),
                record_file(2, bytes=[1, 2], size=None, logs_bloom=[], hapi_version_minor=None),
                record_file(3, bytes=None, size=None, logs_bloom="0102", hapi_version_patch=None),
                record_file(4, bytes=[1] * 5, hapi_version_major=None, gas_used=0),
            ]
        }
    )
    ledger.execute("update record_file set size = 99 where index = 4")  # the size column wins over bytes
    found = {block["number"]: block for block in client.get(URL).json()["blocks"]}
    assert (found[1]["size"], found[1]["logs_bloom"], found[1]["gas_used"]) == (8, None, None)
    assert (found[2]["size"], found[2]["logs_bloom"], found[2]["hapi_version"]) == (2, "0x", None)
    assert (found[3]["size"], found[3]["logs_bloom"], found[3]["hapi_version"]) == (
        None,
        "0x" + "0102".rjust(512, "0"),
        None,
    )
    assert (found[4]["size"], found[4]["hapi_version"], found[4]["gas_used"]) == (99, None, 0)


def test_empty(client: TestClient) -> None:
    assert client.get(URL).json() == {"blocks": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("order=asc", [1, 2, 3, 4, 5, 6]),
        ("order=ASC", [1, 2, 3, 4, 5, 6]),
        ("order=desc", [6, 5, 4, 3, 2, 1]),
        ("limit=2", [6, 5]),
        ("limit=2&limit=3", [6, 5, 4]),
        ("block.number=3", [3]),
        ("block.number=eq:3", [3]),
        ("block.number=0x3", [3]),
        ("block.number=0X3", None),
        ("block.number=0x0000000000000000000000003", [3]),
        ("block.number=003", [3]),
        ("block.number=3&block.number=5", [5, 3]),
        ("block.number=gt:3", [6, 5, 4]),
        ("block.number=gte:3", [6, 5, 4, 3]),
        ("block.number=lt:3", [2, 1]),
        ("block.number=lte:3", [3, 2, 1]),
        ("block.number=gt:1&block.number=gte:3", [6, 5, 4, 3]),
        ("block.number=gt:2&block.number=lt:0x5", [4, 3]),
        ("block.number=gte:2&block.number=lte:4&order=asc", [2, 3, 4]),
        ("block.number=9223372036854775807", []),
        (f"timestamp={ts(end(3))}", [3]),
        (f"timestamp=eq:{ts(end(3))}", [3]),
        (f"timestamp={ts(end(3) - 500)}", []),  # consensus_end, not start
        (f"timestamp=ne:{ts(end(3))}", [6, 5, 4, 2, 1]),
        (f"timestamp={ts(end(3))}&timestamp={ts(end(4))}", [4, 3]),
        (f"timestamp=gt:{ts(end(4))}", [6, 5]),
        (f"timestamp=gte:{ts(end(4))}", [6, 5, 4]),
        (f"timestamp=lt:{ts(end(2))}", [1]),
        (f"timestamp=lte:{ts(end(2))}", [2, 1]),
        (f"timestamp=gt:{ts(end(1))}&timestamp=lt:{ts(end(4))}&order=asc", [2, 3]),
        ("timestamp=1676540001.000003", [3]),  # right-padded fraction
        ("timestamp=1676540001", []),
        (f"block.number=gte:2&timestamp=lt:{ts(end(5))}&limit=2", [4, 3]),
        ("Block.Number=2", [2]),
    ],
)
def test_filters(blocks: TestClient, query: str, expected: list[int] | None) -> None:
    response = blocks.get(f"{URL}?{query}")
    if expected is None:
        assert response.status_code == 400
        return
    assert numbers(response) == expected


def test_order_follows_the_first_of_block_number_and_timestamp(client: TestClient, ledger: Ledger) -> None:
    # A ledger where block numbers and consensus ends disagree, to see which column orders the page.
    ledger.load(
        {
            "recordFiles": [
                record_file(1, consensus_end=end(3)),
                record_file(2),
                record_file(3, consensus_end=end(1)),
            ]
        }
    )
    assert numbers(client.get(URL)) == [1, 2, 3]  # by consensus end
    assert numbers(client.get(f"{URL}?block.number=gte:1")) == [3, 2, 1]
    assert numbers(client.get(f"{URL}?block.number=gte:1&timestamp=gte:0")) == [3, 2, 1]
    assert numbers(client.get(f"{URL}?timestamp=gte:0&block.number=gte:1")) == [1, 2, 3]
    assert numbers(client.get(f"{URL}?timestamp=gte:0&order=asc")) == [3, 2, 1]


def test_pagination_follows_next_links_to_the_end(blocks: TestClient) -> None:
    seen: list[int] = []
    links: list[str] = []
    url: str | None = f"{URL}?limit=2"
    while url:
        response = blocks.get(url)
        seen += numbers(response)
        url = response.json()["links"]["next"]
        if url:
            links.append(url)
            assert response.headers["link"] == f'<{url}>; rel="next"'
    assert seen == [6, 5, 4, 3, 2, 1]
    assert links == [f"{URL}?limit=2&block.number=lt:5", f"{URL}?limit=2&block.number=lt:3"]


@pytest.mark.parametrize(
    ("query", "expected_link"),
    [
        ("limit=2&order=asc", f"{URL}?limit=2&order=asc&block.number=gt:2"),
        (
            f"block.number=gt:1&timestamp=lt:{ts(end(6))}&order=asc&limit=1",
            f"{URL}?timestamp=lt:{ts(end(6))}&order=asc&limit=1&block.number=gt:2",
        ),
        (f"timestamp=gte:{ts(end(2))}&limit=2", f"{URL}?timestamp=gte:{ts(end(2))}&limit=2&block.number=lt:5"),
        ("block.number=gt:2&block.number=lte:6&limit=2", f"{URL}?block.number=gt:2&block.number=lt:5&limit=2"),
        (  # equalities stay, and the bound moves the link on
            "block.number=2&block.number=3&block.number=4&limit=2",
            f"{URL}?block.number=2&block.number=3&block.number=4&block.number=lt:3&limit=2",
        ),
    ],
)
def test_next_links(blocks: TestClient, query: str, expected_link: str) -> None:
    assert blocks.get(f"{URL}?{query}").json()["links"]["next"] == expected_link


def test_next_link_rules(blocks: TestClient, api_settings: Settings) -> None:
    assert blocks.get(f"{URL}?limit=6").json()["links"]["next"] is None  # the page ends the data
    reconfigure(blocks, dataclasses.replace(api_settings, pagination_probe=False))
    assert blocks.get(f"{URL}?limit=6").json()["links"]["next"] == f"{URL}?limit=6&block.number=lt:1"
    # the reference's empty-range rule: gt:4 and lt:5 leave nothing
    assert blocks.get(f"{URL}?limit=2&block.number=gt:4&order=desc").json()["links"]["next"] is None
    assert blocks.get(f"{URL}?limit=2&block.number=gt:0x3&order=desc").json()["links"]["next"] == (
        f"{URL}?limit=2&block.number=gt:0x3&block.number=lt:5&order=desc"
    )


def test_limit_settings(blocks: TestClient, api_settings: Settings) -> None:
    reconfigure(blocks, dataclasses.replace(api_settings, limit_max=2, limit_default=1))
    assert numbers(blocks.get(URL)) == [6]
    response = blocks.get(f"{URL}?limit=10")
    assert numbers(response) == [6, 5]
    assert response.json()["links"]["next"] == f"{URL}?limit=10&block.number=lt:5"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        (
            "block.number=gt:invalidnumber&timestamp=invalidtimestamp&order=any&limit=invalidlimit&index=2",
            [
                "Invalid parameter: block.number",
                "Invalid parameter: timestamp",
                "Invalid parameter: order",
                "Invalid parameter: limit",
                "Unknown query parameter: index",
            ],
        ),
        ("block.number=-1", ["Invalid parameter: block.number"]),
        ("block.number=ne:1", ["Invalid parameter: block.number"]),
        ("block.number=9223372036854775808", ["Invalid parameter: block.number"]),
        ("block.number=0x8000000000000000", ["Invalid parameter: block.number"]),
        ("block.number=12345678901234567890", ["Invalid parameter: block.number"]),
        ("block.number=0x", ["Invalid parameter: block.number"]),
        ("block.number=0xg", ["Invalid parameter: block.number"]),
        ("block.number=1.5", ["Invalid parameter: block.number"]),
        ("block.number=", ["Invalid parameter: block.number"]),
        ("block.number=gt:lt:1", ["Invalid parameter: block.number"]),
        ("block.number=GT:1", ["Invalid parameter: block.number"]),
        ("timestamp=1.1234567890", ["Invalid parameter: timestamp"]),
        ("timestamp=abc", ["Invalid parameter: timestamp"]),
        ("timestamp=foo:1", ["Invalid parameter: timestamp"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("limit=gt:5", ["Invalid parameter: limit"]),
        ("order=ascending", ["Invalid parameter: order"]),
        (
            "block.number=1&block.number=x&hash=1&foo=2",
            ["Invalid parameter: block.number", "Unknown query parameter: hash", "Unknown query parameter: foo"],
        ),
        (
            "&".join(["block.number=1"] * 9),
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
    ],
)
def test_bad_input(blocks: TestClient, query: str, expected: list[str]) -> None:
    response = blocks.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


# --- one block --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "3",
        "0003",
        block_hash(3),
        "0x" + block_hash(3),
        block_hash(3).upper(),
        "0x" + block_hash(3).upper(),
        block_hash(3)[:64],
        "0x" + block_hash(3)[:64],
        block_hash(3)[:64].upper(),
        "0x" + block_hash(3)[:64].upper(),
    ],
)
def test_one_block(blocks: TestClient, path: str) -> None:
    response = blocks.get(f"{URL}/{path}")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "public, max-age=600"
    assert response.json() == EXPECTED_3
    assert reference_schema_errors(URL + "/{hashOrNumber}", response.json()) == []


def test_block_zero_and_large_numbers(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"recordFiles": [record_file(0), record_file(1, index=9_223_372_036_854_775_807)]})
    assert client.get(f"{URL}/0").json()["number"] == 0
    assert client.get(f"{URL}/9223372036854775807").json()["number"] == 9_223_372_036_854_775_807


def test_hash_prefix_edges(client: TestClient, ledger: Ledger) -> None:
    """The 64-character prefix matches exactly the hashes that start with it."""
    base = "ab" * 31 + "a"
    ledger.load(
        {
            "recordFiles": [
                record_file(1, hash=base + "f" + "0" * 32),
                record_file(2, hash=base + "e" + "f" * 32),
                record_file(3, hash=base[:-1] + "b" + "0" + "0" * 32),
                record_file(4, hash="9" * 63 + "9" + "1" * 32),
                record_file(5, hash="9" * 63 + ":" + "1" * 32),
            ]
        }
    )
    assert client.get(f"{URL}/{base}f").json()["number"] == 1
    assert client.get(f"{URL}/{base}e").json()["number"] == 2
    assert client.get(f"{URL}/{'9' * 64}").json()["number"] == 4
    assert client.get(f"{URL}/{base}d").status_code == 404


def test_ambiguous_prefix_is_not_found(client: TestClient, ledger: Ledger) -> None:
    prefix = "cd" * 32
    ledger.load({"recordFiles": [record_file(1, hash=prefix + "1" * 32), record_file(2, hash=prefix + "2" * 32)]})
    assert client.get(f"{URL}/{prefix}").status_code == 404
    assert client.get(f"{URL}/{prefix}{'2' * 32}").json()["number"] == 2


@pytest.mark.parametrize(
    "path", ["7", "9223372036854775807", "ff" * 48, "0x" + "ff" * 32, block_hash(3)[:63] + "0"]
)
def test_one_block_not_found(blocks: TestClient, path: str) -> None:
    response = blocks.get(f"{URL}/{path}")
    assert response.status_code == 404
    assert messages(response) == ["Not found"]


@pytest.mark.parametrize(
    "path",
    [
        "b0162e8a244dc05fbd6f3",
        "0xb0162e8a244dc05fbd6f3",
        "ff90773193892540084e62086df3953d2362061",
        "0xff90773193892540084e62086df3953d2362061",
        "invalidnumber",
        "1test",
        "-1",
        "1.5",
        "0x1",
        "0X" + "ab" * 32,
        "ab" * 40,
        "ab" * 48 + "a",
        "9223372036854775808",
        "12345678901234567890",
        "0.0.3",
    ],
)
def test_one_block_bad_path(blocks: TestClient, path: str) -> None:
    response = blocks.get(f"{URL}/{path}")
    assert response.status_code == 400
    assert messages(response) == ["Invalid parameter: hashOrNumber"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("block.number=3", ["Unknown query parameter: block.number"]),
        ("limit=1&order=asc", ["Unknown query parameter: limit", "Unknown query parameter: order"]),
    ],
)
def test_one_block_takes_no_parameters(blocks: TestClient, query: str, expected: list[str]) -> None:
    response = blocks.get(f"{URL}/3?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
