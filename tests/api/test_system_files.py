"""System files 0.0.111/0.0.112: the timestamp window and loading a version (appends, fallback).

Decoding is tested in tests/unit/test_ledger_system_files.py; tests/hapi_files.py builds file contents.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.hapi_files import CORRUPT
from tests.support import Ledger

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring.params import ParamSet, ParseContext
from ledgermirror.api.resources.network import system_files
from ledgermirror.api.resources.network.system_files import Window
from ledgermirror.ledger.system_files import Undecodable

INT64_MAX = (1 << 63) - 1


def file_rows(entity: int | str, *rows: tuple[int, bytes | None, int]) -> list[dict[str, Any]]:
    """``filedata`` setup items: ``(consensus_timestamp, data, transaction_type)``."""
    return [
        {
            "consensus_timestamp": timestamp,
            "entity_id": entity,
            "file_data": None if data is None else list(data),
            "transaction_type": kind,
        }
        for timestamp, data, kind in rows
    ]


CREATE, APPEND, UPDATE = 17, 16, 19


def reference_schema_errors(path: str, body: Any) -> list[str]:
    """Where ``body`` breaks the reference OpenAPI's 200 schema of ``path`` (skips without the document)."""
    return reference_openapi.schema_errors(path, body)


# --- the timestamp window -------------------------------------------------------------------------------------


def _window(query: str) -> Window:
    params = ParamSet([system_files.TIMESTAMP], checks=[system_files.at_most_two_timestamps])
    parsed = params.parse(query, ParseContext())
    return system_files.window(parsed)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", Window(0, INT64_MAX, False)),
        ("timestamp=5", Window(0, 5_000_000_000, True)),
        ("timestamp=eq:5", Window(0, 5_000_000_000, True)),
        ("timestamp=lte:5.000000002", Window(0, 5_000_000_002, True)),
        ("timestamp=lt:5.000000002", Window(0, 5_000_000_001, True)),
        ("timestamp=gte:5", Window(5_000_000_000, INT64_MAX, False)),
        ("timestamp=gt:5", Window(5_000_000_001, INT64_MAX, False)),
        ("timestamp=gt:1&timestamp=lt:9", Window(1_000_000_001, 8_999_999_999, True)),
        ("timestamp=eq:3&timestamp=eq:4", Window(0, 4_000_000_000, True)),  # the last upper bound wins
        ("timestamp=lt:1&timestamp=eq:4", Window(0, 4_000_000_000, True)),
        ("timestamp=gte:4&timestamp=gt:2", Window(2_000_000_001, INT64_MAX, False)),
        ("timestamp=gt:9&timestamp=lt:1", Window(9_000_000_001, 999_999_999, True)),  # empty: found nothing
        ("timestamp=1.1", Window(0, 1_100_000_000, True)),  # the fraction is right-padded
    ],
)
def test_window(query: str, expected: Window) -> None:
    assert _window(query) == expected


def test_window_rejects_ne_and_a_third_value() -> None:
    with pytest.raises(BadRequest) as error:
        _window("timestamp=ne:5")
    assert error.value.messages == ("Invalid parameter: timestamp",)
    with pytest.raises(BadRequest) as error:
        _window("timestamp=1&timestamp=2&timestamp=3")
    assert error.value.messages == (
        "Parameter values count exceeds maximum number allowed: timestamp count: 3 max: 2",
    )


# --- loading a version ------------------------------------------------------------------------------------------


def _load(client: TestClient, num: int, lower: int = 0, upper: int = INT64_MAX) -> tuple[bytes, int] | None:
    """Load with a decoder that accepts anything except contents that contain CORRUPT."""

    def decode(data: bytes) -> bytes:
        if CORRUPT in data:
            raise Undecodable("corrupt")
        return data

    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    assert client.portal is not None
    loaded = client.portal.call(system_files.load, ctx, num, Window(lower, upper, upper != INT64_MAX), decode)
    return None if loaded is None else (loaded.content, loaded.timestamp)


A100, B, C, D50, E = b"a" * 100, b"b", b"c", b"d" * 50, b"e"
HISTORY = file_rows(
    112,
    (10, A100, CREATE),
    (20, B, APPEND),
    (30, b"", UPDATE),
    (40, C, APPEND),
    (50, D50, UPDATE),
    (60, E, APPEND),
)


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (0, 9, None),
        (0, 10, (A100, 10)),
        (0, 20, (A100 + B, 20)),
        (0, 30, (A100 + B, 20)),  # the empty update is skipped
        (0, 40, (A100 + B + C, 40)),
        (0, 50, (D50, 50)),
        (0, INT64_MAX, (D50 + E, 60)),
        (11, 40, None),  # only appends and an empty update inside the window
        (60, 60, None),
        (50, 50, (D50, 50)),
        (10, 45, (A100 + B + C, 40)),
    ],
)
def test_load_versions_with_appends(
    client: TestClient, ledger: Ledger, lower: int, upper: int, expected: tuple[bytes, int] | None
) -> None:
    ledger.load({"filedata": HISTORY})
    assert _load(client, 112, lower, upper) == expected


def test_load_reads_only_the_requested_file(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": HISTORY + file_rows(111, (70, b"fee", CREATE), (80, b"x", APPEND))})
    assert _load(client, 111) == (b"feex", 80)
    assert _load(client, 112) == (D50 + E, 60)
    assert _load(client, 150) is None


def _insert(ledger: Ledger, timestamp: int, data: bytes | None, kind: int) -> None:
    ledger.execute(
        "insert into file_data (consensus_timestamp, entity_id, file_data, transaction_type)"
        " values ($1, 112, $2, $3)",
        timestamp,
        data,
        kind,
    )


def test_load_null_data(client: TestClient, ledger: Ledger) -> None:
    _insert(ledger, 10, None, CREATE)
    _insert(ledger, 20, B, APPEND)
    _insert(ledger, 30, None, UPDATE)
    assert _load(client, 112) == (B, 20)  # a create without data anchors; an update without data does not
    _insert(ledger, 40, None, APPEND)
    assert _load(client, 112) == (B, 40)


def test_fallback_tries_fewer_appends_then_older_versions(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"filedata": HISTORY + file_rows(112, (70, CORRUPT, APPEND))})
    assert _load(client, 112) == (D50 + E, 60)  # same anchor, one append fewer
    ledger.load({"filedata": file_rows(112, (80, CORRUPT, UPDATE), (90, b"f", APPEND))})
    assert _load(client, 112) == (D50 + E, 60)  # 80+90, then 80 alone, then 50..70 fail
    assert _load(client, 112, lower=51) is None  # nothing readable is newer than 51


def test_fallback_gives_up_after_max_attempts(client: TestClient, ledger: Ledger) -> None:
    attempts = system_files.MAX_FILE_ATTEMPTS
    corrupt = [(1000 + index, CORRUPT, UPDATE) for index in range(attempts - 1)]
    ledger.load({"filedata": file_rows(112, (10, b"ok", CREATE), *corrupt)})
    assert _load(client, 112) == (b"ok", 10)  # the last allowed attempt succeeds
    ledger.load({"filedata": file_rows(112, (2000, CORRUPT, UPDATE))})
    assert _load(client, 112) is None


def test_file_entity_uses_the_configured_shard_and_realm(client: TestClient) -> None:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    assert system_files.file_entity(ctx, 112).encoded == 112
    assert str(system_files.file_entity(ctx, 111)) == "0.0.111"
