"""The API's database list and what a request must find replayed (``db/replicas``, ``api/freshness``)."""

from __future__ import annotations

import pytest

from ledgermirror.api.freshness import floor_of
from ledgermirror.db.replicas import Floor, describe, split_urls
from ledgermirror.ledger.entity_id import encode_entity_id


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
    ],
)
def test_the_anchor_is_the_greatest_timestamp_of_the_query(query: str, anchor: int | None) -> None:
    floor = floor_of(query)
    assert (None if floor is None else floor.ns) == anchor


@pytest.mark.parametrize(
    ("query", "floor"),
    [
        ("limit=25&order=desc", None),
        ("account.id=gt:0.0.5", Floor(entity=5)),
        ("limit=25&account.id=gte:0.0.9&account.id=lt:0.0.1001", Floor(entity=1001)),
        ("token.id=0.0.70&spender.id=gt%3A0.0.80", Floor(entity=80)),
        ("account.id=0.0.2.3", None),  # not an entity id: the parse's 400
        ("account.id=gt:0x00000000000000000000000000000000000003e9", None),  # EVM form: never a next link's
        ("block.number=lt:42&timestamp=gte:7", Floor(ns=7_000_000_000, block=42)),
        ("serialnumber=lt:40&token.id=lte:0.0.12", Floor(entity=12, freshest=True)),
        ("serialnumber=40", None),  # an equality is no paging bound
        ("hook.id=gt:3", Floor(freshest=True)),
    ],
)
def test_a_next_links_bounds_are_the_floor_a_database_must_hold(query: str, floor: Floor | None) -> None:
    assert floor_of(query) == floor


def test_entity_ids_without_shard_and_realm_take_the_deployments() -> None:
    expected = Floor(entity=encode_entity_id(1, 2, 7))
    assert floor_of("account.id=gt:7", shard=1, realm=2) == floor_of("account.id=gt:1.2.7") == expected
