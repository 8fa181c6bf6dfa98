"""The importer's Prometheus metrics: an import of the reference's fixtures counted file by file and table by
table, a refused file counted under its check, and the metrics server scraped over HTTP and parsed with
``prometheus_client``'s own parser."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from pathlib import Path

import asyncpg
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from tests.importer.fixtures import FIRST, NODE_IDS, SIGNING_BOOK
from tests.importer.importing import copy_streams, flip, node_file, rewrite_gzip, table_counts

from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats, LogProgress
from ledgermirror.importer.sources import StoreRequests, open_store
from ledgermirror.metrics.importer import ImporterMetrics, MetricsProgress, serve
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def run_with_metrics(url: str, root: Path, metrics: ImporterMetrics) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(url)
        try:
            options = ImportOptions(once=True, address_book=SIGNING_BOOK)
            await run_import(
                conn, open_store(str(root)), options, progress=MetricsProgress(LogProgress(), metrics)
            )
        finally:
            await conn.close()

    asyncio.run(go())


def test_an_import_is_counted(database: Prepared, tmp_path: Path) -> None:
    metrics = ImporterMetrics()
    run_with_metrics(database.owner_url, copy_streams(tmp_path / "streams"), metrics)
    samples = parse(generate_latest(metrics.registry).decode())
    assert samples[("ledgermirror_importer_files_total", ())] == 2
    assert samples[("ledgermirror_importer_transactions_total", ())] == 3
    tables = table_counts(database.owner_url)
    for table in ("record_file", "transaction", "crypto_transfer", "address_book", "address_book_entry"):
        assert samples[("ledgermirror_importer_rows_total", (("table", table),))] == tables[table], table
    # every node signed both files and agreed
    assert samples[("ledgermirror_importer_node_signatures_total", (("result", "valid"),))] == 2 * len(NODE_IDS)
    assert samples[("ledgermirror_importer_node_signatures_total", (("result", "rejected"),))] == 0
    for stage in ("download", "signatures", "verify", "write"):
        assert samples[("ledgermirror_importer_stage_seconds_total", (("stage", stage),))] > 0, stage
    newest = samples[("ledgermirror_importer_last_consensus_timestamp_seconds", ())]
    assert newest == pytest.approx(1657701971.304284004)
    assert samples[("ledgermirror_importer_stream_lag_seconds", ())] > 100_000_000  # the fixtures are from 2022
    # a rerun imports nothing and counts nothing more
    run_with_metrics(database.owner_url, tmp_path / "streams", metrics)
    assert parse(generate_latest(metrics.registry).decode())[("ledgermirror_importer_files_total", ())] == 2


def test_a_sources_requests_are_served() -> None:
    """``watch_store``: the counts are read at each scrape, every operation labelled (zero included), the
    sources watched added up."""
    metrics = ImporterMetrics()
    first, second = StoreRequests(), StoreRequests()
    metrics.watch_store(first)
    samples = parse(generate_latest(metrics.registry).decode())
    for operation in ("list", "get", "head"):
        assert samples[("ledgermirror_importer_store_requests_total", (("operation", operation),))] == 0
    first.lists, first.gets, first.bytes_read = 3, 7, 1_000
    metrics.watch_store(second)
    second.gets, second.heads, second.bytes_read = 2, 1, 24
    samples = parse(generate_latest(metrics.registry).decode())
    assert samples[("ledgermirror_importer_store_requests_total", (("operation", "list"),))] == 3
    assert samples[("ledgermirror_importer_store_requests_total", (("operation", "get"),))] == 9
    assert samples[("ledgermirror_importer_store_requests_total", (("operation", "head"),))] == 1
    assert samples[("ledgermirror_importer_store_read_bytes_total", ())] == 1_024


def test_a_folders_reads_are_counted(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    requests = StoreRequests()

    async def go() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            await run_import(
                conn, open_store(str(streams), requests), ImportOptions(once=True, address_book=SIGNING_BOOK)
            )
        finally:
            await conn.close()

    asyncio.run(go())
    # every node's two signature files, one copy of each data file and the sidecar (each found at the first path
    # tried: the folder has no day folders)
    first_node = streams / "recordstreams" / "record0.0.3"
    read = [*streams.rglob("*.rcd_sig"), *first_node.glob("*.rcd.gz"), *first_node.glob("sidecar/*")]
    assert requests.gets == len(read) == 2 * len(NODE_IDS) + 2 + 1
    assert requests.bytes_read == sum(path.stat().st_size for path in read)
    assert requests.lists > 0 and requests.heads == 0


def test_a_refused_file_counts_under_its_check(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    for node_id in NODE_IDS:
        rewrite_gzip(node_file(streams, node_id, f"{FIRST}.rcd.gz"), lambda data: flip(data, -40))
    metrics = ImporterMetrics()
    with pytest.raises(StreamFileError):
        run_with_metrics(database.owner_url, streams, metrics)
    samples = parse(generate_latest(metrics.registry).decode())
    assert samples[("ledgermirror_importer_verification_failures_total", (("check", "file hash"),))] == 1
    assert samples[("ledgermirror_importer_files_total", ())] == 0


def test_the_metrics_server_answers_a_scrape() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    metrics = ImporterMetrics()
    metrics.source_errors.inc()
    stop = serve(metrics, "127.0.0.1", port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            samples = parse(response.read().decode())
    finally:
        stop()
    assert samples[("ledgermirror_importer_source_errors_total", ())] == 1
    assert ("ledgermirror_importer_files_total", ()) in samples


def test_each_run_is_counted_from_its_own_start() -> None:
    """A run's stats start at zero: whatever earlier runs' stats were (even a freed object whose id the new
    one reuses), only the new run's own gains are added."""
    metrics = ImporterMetrics()
    for files in (2, 1, 3):
        stats = ImportStats(files=files, items=files * 10)
        metrics.observe(stats)
        metrics.observe(stats)  # observed again at finish: nothing more
        del stats
    samples = parse(generate_latest(metrics.registry).decode())
    assert samples[("ledgermirror_importer_files_total", ())] == 6
    assert samples[("ledgermirror_importer_transactions_total", ())] == 60
