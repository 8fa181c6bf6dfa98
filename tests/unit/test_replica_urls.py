"""The API's database list and the timestamp a request must find replayed (``db/replicas``, ``api/freshness``)."""

from __future__ import annotations

import pytest

from ledgermirror.api.freshness import anchor_ns
from ledgermirror.db.replicas import describe, split_urls


def test_several_urls_split_on_commas_and_a_multi_host_url_stays_one() -> None:
    assert split_urls("postgresql://a@r1:5432/m, postgres://a@r2/m,postgresql://a:pw@p/m") == [
        "postgresql://a@r1:5432/m",
        "postgres://a@r2/m",
        "postgresql://a:pw@p/m",
    ]
    assert split_urls("postgresql://a@h1:5432,h2:5433/m") == ["postgresql://a@h1:5432,h2:5433/m"]
    assert split_urls(" ") == []


def test_a_database_is_described_without_its_credentials() -> None:
    assert describe("postgresql://reader:secret@replica-1:5432/mirror") == "replica-1:5432/mirror"
    assert "secret" not in describe("postgresql://reader:secret@h1:1,h2:2/m")


@pytest.mark.parametrize(
    ("query", "anchor"),
    [
        ("limit=2", None),
        ("timestamp=lt:1700000000.5", 1_700_000_000_500_000_000),
        ("TIMESTAMP=gte:1&timestamp=lte%3A2.000000001&limit=3", 2_000_000_001),
        ("timestamp=1700000000", 1_700_000_000_000_000_000),
        ("timestamp=gt:nonsense", None),  # left to the parse's 400
        ("account.id=gt:0.0.5", None),
    ],
)
def test_the_anchor_is_the_greatest_timestamp_of_the_query(query: str, anchor: int | None) -> None:
    assert anchor_ns(query) == anchor
