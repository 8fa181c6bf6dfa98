"""Block streams from a real S3 server (``weed mini`` on 127.0.0.1) through ``s3://``: the reference's blocks,
and a simulated network that cuts over from record files to blocks in the same bucket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import asyncpg
import pytest
from bench._s3server import S3Server, upload
from tests.importer.blocks_support import FILES, simulated
from tests.importer.fixtures import SIGNING_BOOK, STREAMS
from tests.importer.importing import fetch

from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.options import ImportOptions
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

BLOCK_7_TIME = 1770842059_973945087
"""The header timestamp of the reference's block 7 (the first of the fixtures)."""


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated(tmp_path_factory.mktemp("cutover-s3"), "cutover")


@pytest.fixture(scope="module")
def s3(s3_server: S3Server, network: Path) -> S3Server:
    upload(s3_server, STREAMS / "data" / "blockstreams", "fixture/block")
    upload(s3_server, network, "cutover")
    return s3_server


@pytest.fixture
def s3_env(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    return s3


def test_the_reference_blocks_from_a_bucket(database: Prepared, s3_env: S3Server, tmp_path: Path) -> None:
    (tmp_path / "addressbook.bin").write_bytes(SIGNING_BOOK.read_bytes())
    url = f"s3://{s3_env.bucket}/fixture"
    stats = _run(database, url, tmp_path / "addressbook.bin", "blocks", start=BLOCK_7_TIME)  # a binary search
    assert stats == 2
    rows = fetch(database.owner_url, "select index from record_file order by 1")
    assert [row["index"] for row in rows] == [7, 8]


def test_a_bucket_that_cuts_over_to_blocks(database: Prepared, s3_env: S3Server, network: Path) -> None:
    truth = json.loads((network / "truth.json").read_text())
    first = truth["record_files"]["files"][0]["consensus_start"]
    files = _run(database, f"s3://{s3_env.bucket}/cutover", network / "addressbook.bin", "auto", start=first)
    assert files == FILES
    rows = fetch(database.owner_url, "select index, wrapped_record_block_hash from record_file order by index")
    assert [row["index"] for row in rows] == list(range(FILES))
    first_block = truth["record_files"]["first_wrapped_block"]
    wrapped = [row["wrapped_record_block_hash"] is not None for row in rows]
    assert wrapped == [index >= first_block for index in range(FILES)]


def _run(database: Prepared, url: str, book: Path, stream: str, start: int | None = None) -> int:
    settings = ImportOptions(once=True, address_book=book, start=start)

    async def go() -> int:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return (await run_stream(conn, url, settings, stream)).files
        finally:
            await conn.close()

    return asyncio.run(go())


def test_an_empty_database_starts_at_a_buckets_newest_block(
    database: Prepared, s3_env: S3Server, network: Path
) -> None:
    files = _run(database, f"s3://{s3_env.bucket}/cutover", network / "addressbook.bin", "blocks")
    assert files == 1
    rows = fetch(database.owner_url, "select index from record_file")
    assert [row["index"] for row in rows] == [FILES - 1]
