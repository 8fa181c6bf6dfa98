"""Import from a real S3 server (the run's ``weed mini`` on 127.0.0.1, tests/importer/conftest.py) through ``s3://``."""

from __future__ import annotations

import pytest
from bench._s3server import S3Server, upload
from tests.importer.fixtures import EXPECTED, FIRST, NODE_IDS, RECORDS, SECOND, node_folder
from tests.importer.importing import copy_streams_hip679, fetch, run, table_counts
from tests.support import Ledger

from ledgermirror.importer.sources import StoreRequests, open_store
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")


@pytest.fixture(scope="module")
def s3(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> S3Server:
    upload(s3_server, RECORDS, "flat/recordstreams")
    upload(s3_server, copy_streams_hip679(tmp_path_factory.mktemp("hip679")), "bynode")
    return s3_server


@pytest.fixture
def s3_env(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    return s3


def _names(url: str) -> list[str]:
    return [row["name"] for row in fetch(url, "select name from record_file order by consensus_end")]


def test_a_bucket_imports_from_the_start_date(database: Prepared, ledger: Ledger, s3_env: S3Server) -> None:
    stats = run(database.owner_url, f"s3://{s3_env.bucket}/flat", start=EXPECTED[FIRST].consensus_start)
    assert (stats.files, stats.items) == (2, 3)
    from_bucket = table_counts(database.owner_url)
    hashes = [
        row["file_hash"] for row in fetch(database.owner_url, "select file_hash from record_file order by 1")
    ]
    assert sorted(hashes) == sorted(EXPECTED[stamp].file_hash for stamp in (FIRST, SECOND))
    ledger.reset()
    run(database.owner_url, RECORDS)
    assert table_counts(database.owner_url) == from_bucket


def test_an_empty_database_follows_a_bucket_from_its_newest_file(database: Prepared, s3_env: S3Server) -> None:
    stats = run(database.owner_url, f"s3://{s3_env.bucket}/flat")
    assert stats.files == 1
    assert _names(database.owner_url) == [f"{SECOND}.rcd.gz"]
    again = run(database.owner_url, f"s3://{s3_env.bucket}/flat")
    assert again.files == 0


def test_a_bucket_in_the_hip679_layout(database: Prepared, s3_env: S3Server) -> None:
    stats = run(database.owner_url, f"s3://{s3_env.bucket}/bynode", start=EXPECTED[FIRST].consensus_start)
    assert stats.files == 2
    assert _names(database.owner_url) == [f"{FIRST}.rcd.gz", f"{SECOND}.rcd.gz"]


def test_a_restart_on_a_bucket_lists_only_after_the_last_file(database: Prepared, s3_env: S3Server) -> None:
    url = f"s3://{s3_env.bucket}/flat"
    first = run(database.owner_url, url, start=EXPECTED[FIRST].consensus_start, end=EXPECTED[FIRST].consensus_end)
    assert first.files == 1
    second = run(database.owner_url, url, book=None)
    assert second.files == 1
    assert _names(database.owner_url) == [f"{FIRST}.rcd.gz", f"{SECOND}.rcd.gz"]


def test_the_importer_counts_the_requests_the_server_answers(database: Prepared, s3_env: S3Server) -> None:
    """``StoreRequests`` against the S3 server's own counter: the same LISTs and GETs, no HEAD; every node's
    signature file, one copy of each data file and of the sidecar read, byte for byte."""
    requests = StoreRequests()
    before = s3_env.request_counts()
    store = open_store(f"s3://{s3_env.bucket}/flat", requests)
    stats = run(database.owner_url, store, start=EXPECTED[FIRST].consensus_start)
    answered = s3_env.request_counts() - before
    assert stats.files == 2
    assert requests.by_operation() == {"list": answered["LIST"], "get": answered["GET"], "head": answered["HEAD"]}
    assert set(answered) <= {"LIST", "GET"}
    signatures = [node_folder(node_id) / f"{stamp}.rcd_sig" for node_id in NODE_IDS for stamp in (FIRST, SECOND)]
    data = [node_folder(0) / f"{stamp}.rcd.gz" for stamp in (FIRST, SECOND)]
    sidecar = node_folder(0) / "sidecar" / f"{SECOND}_01.rcd.gz"
    read = [*signatures, *data, sidecar]
    assert requests.gets == len(read) == 11
    assert requests.bytes_read == sum(path.stat().st_size for path in read)
    # discovery (the root, recordstreams/), then two listings of the three heaviest of four equal nodes
    assert requests.lists == 2 + 2 * 3
