"""The import pipeline on the reference's v6 fixtures: rows, record_file values (B.5), reruns, restarts,
layouts, dates."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.importer.fixtures import EXPECTED, FIRST, RECORDS, SECOND
from tests.importer.importing import copy_streams, copy_streams_hip679, fetch, run, table_counts
from tests.support import Ledger

from ledgermirror.importer.errors import ImporterError, PreviousHashMismatch
from ledgermirror.importer.options import parse_date
from ledgermirror.importer.pipeline import stream_name_prefix
from ledgermirror.importer.record_file_row import BLOOM_BYTES
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

FIRST_INSTANT = EXPECTED[FIRST].consensus_end


def _record_files(url: str) -> list[dict[str, object]]:
    return [dict(row) for row in fetch(url, "select * from record_file order by consensus_end")]


def test_fixtures_import_with_the_reference_record_file_values(database: Prepared) -> None:
    stats = run(database.owner_url, RECORDS)
    assert (stats.files, stats.items) == (2, 3)
    rows = _record_files(database.owner_url)
    assert [row["name"] for row in rows] == [f"{FIRST}.rcd.gz", f"{SECOND}.rcd.gz"]
    for row, stamp in zip(rows, (FIRST, SECOND), strict=True):
        expected = EXPECTED[stamp]
        assert row["index"] == expected.block_number
        assert row["count"] == expected.count
        assert row["consensus_start"] == expected.consensus_start
        assert row["consensus_end"] == expected.consensus_end
        assert row["size"] == expected.size
        assert row["file_hash"] == expected.file_hash
        assert row["prev_hash"] == expected.previous_hash
        assert row["hash"] == expected.hash
        assert row["version"] == 6
        assert row["digest_algorithm"] == 0
        assert (row["hapi_version_major"], row["hapi_version_minor"], row["hapi_version_patch"]) == (0, 28, 0)
        assert (row["software_version_major"], row["software_version_minor"]) == (0, 28)
        assert row["bytes"] is None
        assert isinstance(row["load_start"], int) and isinstance(row["load_end"], int)
        assert row["load_start"] <= row["load_end"]
    assert [row["sidecar_count"] for row in rows] == [0, 1]
    assert [row["gas_used"] for row in rows] == [0, 800_000]  # top-level contract call only
    assert rows[0]["logs_bloom"] == bytes(BLOOM_BYTES)
    assert len(rows[1]["logs_bloom"]) == BLOOM_BYTES  # type: ignore[arg-type]


def test_transactions_and_the_bootstrap_address_book_are_written(database: Prepared) -> None:
    run(database.owner_url, RECORDS)
    stamps = [
        row["consensus_timestamp"]
        for row in fetch(database.owner_url, "select consensus_timestamp from transaction order by 1")
    ]
    assert stamps == [1657701968041986003, 1657701971304284003, 1657701971304284004]
    books = fetch(database.owner_url, "select start_consensus_timestamp, file_id, node_count from address_book")
    assert [tuple(row) for row in books] == [(1, 102, 4)]
    nodes = fetch(database.owner_url, "select node_id, node_account_id from address_book_entry order by node_id")
    assert [tuple(row) for row in nodes] == [(0, 3), (1, 4), (2, 5), (3, 6)]


def test_a_second_run_writes_nothing(database: Prepared) -> None:
    run(database.owner_url, RECORDS)
    before = table_counts(database.owner_url)
    stats = run(database.owner_url, RECORDS)
    assert (stats.files, stats.rows) == (0, 0)
    assert table_counts(database.owner_url) == before


def test_a_restart_resumes_after_the_last_file_and_ends_as_one_run(database: Prepared, ledger: Ledger) -> None:
    run(database.owner_url, RECORDS)
    uninterrupted = table_counts(database.owner_url)
    ledger.reset()
    first = run(database.owner_url, RECORDS, end=FIRST_INSTANT)
    assert first.files == 1
    assert [row["index"] for row in _record_files(database.owner_url)] == [5]
    second = run(database.owner_url, RECORDS, book=None)  # the book is in the database now
    assert (second.files, second.items) == (1, 2)
    assert table_counts(database.owner_url) == uninterrupted


def test_a_restart_rechecks_the_chain_from_the_stored_hash(database: Prepared) -> None:
    run(database.owner_url, RECORDS, end=FIRST_INSTANT)
    fetch(database.owner_url, "update record_file set hash = $1", "ab" * 48)
    before = table_counts(database.owner_url)
    with pytest.raises(PreviousHashMismatch) as refused:
        run(database.owner_url, RECORDS)
    assert refused.value.file_name == f"{SECOND}.rcd.gz"
    assert refused.value.check == "previous hash"
    assert table_counts(database.owner_url) == before


def test_batches_of_one_file_give_the_same_tables(database: Prepared, ledger: Ledger) -> None:
    run(database.owner_url, RECORDS)
    batched = table_counts(database.owner_url)
    ledger.reset()
    stats = run(database.owner_url, RECORDS, files_per_transaction=1)
    assert stats.commits == 2
    assert table_counts(database.owner_url) == batched


def test_the_hip679_layout_imports_the_same_rows(database: Prepared, ledger: Ledger, tmp_path: Path) -> None:
    run(database.owner_url, copy_streams(tmp_path / "account"))
    by_account = table_counts(database.owner_url)
    ledger.reset()
    stats = run(database.owner_url, copy_streams_hip679(tmp_path / "node"))
    assert stats.files == 2
    assert table_counts(database.owner_url) == by_account


def test_start_and_end_dates_select_files(database: Prepared) -> None:
    stats = run(database.owner_url, RECORDS, start=FIRST_INSTANT + 1)
    assert stats.files == 1
    assert [row["index"] for row in _record_files(database.owner_url)] == [6]


def test_an_empty_database_needs_an_address_book(database: Prepared) -> None:
    with pytest.raises(ImporterError, match="--address-book"):
        run(database.owner_url, RECORDS, book=None)
    assert table_counts(database.owner_url) == {}


def test_dates_and_names() -> None:
    assert parse_date("2022-07-13") == 1657670400 * 10**9
    assert parse_date("2022-07-13T08:46:11.304284003Z") == EXPECTED[SECOND].consensus_start
    assert stream_name_prefix(EXPECTED[SECOND].consensus_start) == SECOND


def test_day_subfolders_of_a_local_source_import_the_same_rows(
    database: Prepared, ledger: Ledger, tmp_path: Path
) -> None:
    """A local source whose root holds the layout in ``YYYY-MM-DD`` subfolders (the reference's local source)."""
    run(database.owner_url, copy_streams(tmp_path / "plain"))
    plain = table_counts(database.owner_url)
    ledger.reset()
    by_day = tmp_path / "days"
    copy_streams(by_day / FIRST[:10])
    (by_day / "2022-07-12" / "recordstreams").mkdir(parents=True)  # an earlier, empty day
    stats = run(database.owner_url, by_day)
    assert stats.files == 2
    assert table_counts(database.owner_url) == plain
