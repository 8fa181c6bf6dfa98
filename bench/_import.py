"""``bench/import``: the importer's throughput on a simulated stream, against the machine's COPY limit.

1. A stream: ``ledgermirror simulate`` run as a child process (so its memory is not the importer's) with
   ``--seconds``, ``--tps``, ``--nodes``, ``--seed`` and ``--format records|blocks|native`` (record files,
   wrapped record blocks, native blocks), or an existing one given with ``--stream DIR``. With ``--bucket``,
   the stream's files are uploaded to a real S3 server on 127.0.0.1 (SeaweedFS ``weed mini``,
   ``bench/_s3server.py``) and imported from ``s3://`` through the importer's bucket source.
2. A fresh embedded database (in ``--data-dir``, else a temporary folder), migrated, durable as
   ``ledgermirror import`` uses it (``--no-fsync`` for a throwaway server).
3. The real pipeline in this process: ``run_import`` (record files) or ``run_block_import`` (blocks) with
   ``once``, the stream's address book and initial balances, from the folder or the bucket. The source's
   requests (LIST pages, GETs, HEADs) and bytes read are counted by the importer's ``Store``
   (``StoreRequests``) and, for a bucket, by the S3 server itself (its Prometheus counter, the upload's
   requests left out); both are reported per million transactions. Measured around it: wall time, the CPU
   of this process and its children (the importer's unpacking process; not the S3 server's, reported on its
   own) and PostgreSQL's (its process tree, exited backends included: ``_procstat.py``), this process's peak
   RSS, and the host's speed (``_hostspeed.py``: the same small work timed every 2 s, by window). The
   pipeline's own clocks give download, signature and data-check seconds; ``rows_of_file_with_lookups`` is
   wrapped to split building rows from writing them (the pipeline's ``write_seconds`` covers both).
4. Rows by table, counted in the database after the import.
5. The physical limit: every imported table's rows read back into records and written with ``db/write.py``'s
   binary COPY (``copy_records``) into an empty, migrated twin database on the same server (same indexes,
   one transaction per table); the COPY calls alone are timed. The ratio says how close the import comes.

Bounded in time: ``--timeout`` stops the simulator, and stops the import cleanly after the transaction in
flight (the figures are then those of the part imported, and the report says so).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
from bench._hostspeed import SpeedProbe
from bench._procstat import postmaster_pids, usage
from bench._s3server import S3Server, upload, weed_mini
from bench._windows import DEFAULT_WINDOW, Sample, Sampler, print_windows, windows

import ledgermirror
from bench import _serverwork
from ledgermirror.db import import_state, write
from ledgermirror.db.migrate import migrate
from ledgermirror.db.schema import TABLES
from ledgermirror.db.sql import quote_identifier
from ledgermirror.importer import errata
from ledgermirror.importer.block_pipeline import run_block_import
from ledgermirror.importer.block_source import FileBlockSource
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.lookups import rows_of_file_with_lookups
from ledgermirror.importer.options import DEFAULT_FILES_PER_TRANSACTION, ImportOptions, parse_date
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats, LogProgress
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.importer.sources import Store, StoreRequests, open_store
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

_ROWS_OF_FILE = "rows_of_file_with_lookups"
"""The name the import drivers' row step (``errata.rows_with_errata``) calls the row builder by (wrapped to time
it; the errata step after it costs microseconds a file)."""
TWIN_DATABASE = "ledgermirror_copy_twin"
COPY_CHUNK_ROWS = 20_000
TARGET_TPS = 10_000
"""Issue 29's sustained rate."""
DAY_AT_100_TPS = 8_640_000
"""Transactions of a day of a 100-TPS network; the target is to import them in under ``DAY_TARGET_SECONDS``."""
DAY_TARGET_SECONDS = 900
FORMATS = ("records", "blocks", "native")
"""The simulator's stream formats this benchmark imports: record files, or blocks (wrapped or native)."""
BUCKET_PREFIX = "stream"
"""Where the stream's files go in the bucket (``s3://<bucket>/stream/...``)."""
_LOCAL_ONLY = frozenset({"keys"})
"""Folders of a simulated stream that stay local (the nodes' private keys)."""
START_OF_TIME = 1
"""``--start-date`` of a bucket import: on an empty database the importer starts a bucket at its newest file
unless told a start (the reference's rule); one nanosecond after 1970 takes every file, and for blocks the
first block is found by the importer's binary search over the block numbers (a few GETs, counted)."""


@dataclass(slots=True)
class Clocks:
    rows: float = 0.0


@dataclass(slots=True)
class CopyLimit:
    rows: int = 0
    copy_seconds: float = 0.0
    read_seconds: float = 0.0
    by_table: dict[str, float] = field(default_factory=dict)
    client_cpu: float = 0.0
    """This process's CPU during the COPY calls (encoding the records)."""
    postgres_cpu: float = 0.0
    """PostgreSQL's CPU (its process tree) during the COPY calls."""


class _Quiet(LogProgress):
    """Progress on stderr every ``every`` seconds (the pipeline's own records are not configured here); a
    sample for the windows at every commit."""

    def __init__(self, sampler: Sampler, every: float = 10.0) -> None:
        self.sampler = sampler
        self.every = every
        self.last = time.monotonic()

    def committed(self, stats: ImportStats) -> None:
        self.sampler.take(stats.items)
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            print(
                f"  {stats.elapsed:7.1f} s  {stats.files} files  {stats.items:,} tx  "
                f"{stats.items / stats.elapsed:,.0f} tx/s",
                file=sys.stderr,
                flush=True,
            )


@contextlib.contextmanager
def timed_rows(clocks: Clocks) -> Iterator[None]:
    """Time ``rows_of_file_with_lookups`` as the pipeline calls it, through ``errata.rows_with_errata``
    (building a file's rows, with the alias lookups they need; the pipeline's ``write_seconds`` holds row
    building and writing)."""
    original = rows_of_file_with_lookups

    async def timed(
        conn: asyncpg.Connection, record_file: RecordFile, batch: Batch, sidecars: Sequence[SidecarFile] = ()
    ) -> None:
        started = time.perf_counter()
        try:
            await original(conn, record_file, batch, sidecars)
        finally:
            clocks.rows += time.perf_counter() - started

    if getattr(errata, _ROWS_OF_FILE, None) is not original:
        raise RuntimeError(f"the import driver no longer calls {_ROWS_OF_FILE}: update bench/_import.py")
    setattr(errata, _ROWS_OF_FILE, timed)
    try:
        yield
    finally:
        setattr(errata, _ROWS_OF_FILE, original)


def simulate(
    out: Path, *, seconds: int, tps: int, nodes: int, seed: int, timeout: float, fmt: str = "records"
) -> float:
    """Run ``ledgermirror simulate`` in a child process; its wall seconds."""
    env = dict(os.environ)
    source_root = str(Path(ledgermirror.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "ledgermirror", "simulate", "--out", str(out)]
    command += ["--seconds", str(seconds), "--tps", str(tps), "--nodes", str(nodes), "--seed", str(seed)]
    command += ["--format", fmt]
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, timeout=timeout, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _cpu_self(excluded: Sequence[int] = ()) -> float:
    """This process's CPU and its children's (the importer's unpacking process; the children it reaped
    are counted by the kernel for it), less the process trees of ``excluded``: the S3 server that ``--bucket``
    starts is a child of this process, and its CPU is reported on its own (a real bucket's is not spent on the
    importing machine). PostgreSQL's server is not among them."""
    own = usage([os.getpid()]).cpu_seconds
    return own - usage(list(excluded)).cpu_seconds if excluded else own


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


async def count_rows(conn: asyncpg.Connection) -> dict[str, int]:
    """Rows of every modelled table (history twins included) holding any."""
    counts: dict[str, int] = {}
    for name in TABLES:
        count = await conn.fetchval(f"select count(*) from {quote_identifier(name)}")
        if count:
            counts[name] = int(count)
    return counts


def twin_url(owner_url: str) -> str:
    return urlsplit(owner_url)._replace(path="/" + TWIN_DATABASE).geturl()


async def _fresh_twin(conn: asyncpg.Connection) -> None:
    await conn.execute(f"drop database if exists {quote_identifier(TWIN_DATABASE)}")
    await conn.execute(f"create database {quote_identifier(TWIN_DATABASE)}")


async def copy_limit(owner_url: str, counts: dict[str, int], pgdata: str | None = None) -> CopyLimit:
    """Every counted table's rows read back and COPYed into the migrated twin database; the COPY timed, and its
    CPU (this process's and, given ``pgdata``, PostgreSQL's) counted around each call."""
    postgres = postmaster_pids(pgdata) if pgdata is not None else []
    admin = await asyncpg.connect(owner_url)
    limit = CopyLimit()
    try:
        await _fresh_twin(admin)
        twin = await asyncpg.connect(twin_url(owner_url))
        try:
            await migrate(twin)
            for name in counts:
                columns = TABLES[name].column_names
                listed = ", ".join(quote_identifier(column) for column in columns)
                seconds = 0.0
                async with admin.transaction(), twin.transaction():
                    cursor = await admin.cursor(f"select {listed} from {quote_identifier(name)}")
                    while True:
                        read = time.perf_counter()
                        records = await cursor.fetch(COPY_CHUNK_ROWS)
                        limit.read_seconds += time.perf_counter() - read
                        if not records:
                            break
                        values = [tuple(record) for record in records]
                        pg_before = usage(postgres).cpu_seconds if postgres else 0.0
                        cpu_before, started = _cpu_self(), time.perf_counter()
                        written = await write.copy_records(twin, name, columns, values, chunk_rows=COPY_CHUNK_ROWS)
                        seconds += time.perf_counter() - started
                        limit.client_cpu += _cpu_self() - cpu_before
                        if postgres:
                            limit.postgres_cpu += usage(postgres).cpu_seconds - pg_before
                        limit.rows += sum(written.values())
                limit.by_table[name] = seconds
                limit.copy_seconds += seconds
        finally:
            await twin.close()
        await admin.execute(f"drop database {quote_identifier(TWIN_DATABASE)}")
    finally:
        await admin.close()
    return limit


class Slowed:
    """A store whose every request first waits ``delay`` seconds: a distant bucket's latency (``--latency-ms``)
    on top of the local server's."""

    def __init__(self, store: Store, delay: float) -> None:
        self.store = store
        self.delay = delay
        self.description = store.description
        self.requests = store.requests

    async def folders(self, prefix: str) -> list[str]:
        await asyncio.sleep(self.delay)
        return await self.store.folders(prefix)

    async def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        await asyncio.sleep(self.delay)
        return await self.store.names_after(folder, after, suffix, limit)

    async def read(self, key: str) -> bytes | None:
        await asyncio.sleep(self.delay)
        return await self.store.read(key)

    def expect(self, keys: Iterable[str]) -> None:
        self.store.expect(keys)


@dataclass(frozen=True, slots=True)
class Source:
    """Where the import reads the stream: the folder itself, or the bucket it was uploaded to."""

    stream: Path
    blocks: bool
    """Import with ``--stream blocks`` (a block stream), else ``records``."""
    server: S3Server | None = None
    uploaded: int = 0
    upload_seconds: float = 0.0
    latency: float = 0.0
    """Seconds added before every request (``--latency-ms``)."""

    @property
    def location(self) -> str:
        if self.server is None:
            return str(self.stream)
        return f"s3://{self.server.bucket}/{BUCKET_PREFIX}"


@dataclass(slots=True)
class Measured:
    stats: ImportStats
    wall: float
    importer_cpu: float
    postgres_cpu: float
    rss_before: int
    peak_rss: int
    rows_seconds: float
    completed: bool
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    samples: list[Sample]
    requests: StoreRequests = field(default_factory=StoreRequests)
    server_requests: dict[str, int] | None = None
    """The S3 server's own count of the import's requests, by type (a bucket only)."""
    server_cpu: float | None = None
    """The S3 server's CPU seconds during the import (a bucket only: it shares the machine's cores)."""
    shared_buffers: str = ""
    """The server's ``shared_buffers`` (PostgreSQL's own page cache) during the import."""
    probes: list[tuple[float, float]] = field(default_factory=list)
    """The host's speed during the import (``_hostspeed.SpeedProbe``): when each probe ended, microseconds."""
    server_work: dict[str, Any] = field(default_factory=dict)
    """PostgreSQL's WAL, checkpoints and autovacuums during the import (``_serverwork.during``)."""


async def _run(conn: asyncpg.Connection, source: Source, options: ImportOptions, **run: Any) -> ImportStats:
    store = open_store(source.location, run.pop("requests"))
    if source.latency > 0:
        store = Slowed(store, source.latency)
    if source.blocks:
        return await run_block_import(conn, FileBlockSource(store), options, **run)
    return await run_import(conn, store, options, **run)


async def measure_import(
    owner_url: str, pgdata: str, source: Source, options: ImportOptions, timeout: float, *, resume: bool = False
) -> Measured:
    """The import of ``source`` into a fresh database or, with ``resume``, on from what the database holds."""
    conn = await asyncpg.connect(owner_url)
    try:
        if await import_state.last_record_file(conn) is not None and not resume:
            raise SystemExit(
                "the database already holds record files: the benchmark needs a fresh one (or --resume)"
            )
        shared_buffers = str(await conn.fetchval("show shared_buffers"))
        postgres = postmaster_pids(pgdata)
        if not postgres:
            raise SystemExit(f"no PostgreSQL server found for {pgdata}")
        stop = asyncio.Event()
        timer = asyncio.get_running_loop().call_later(timeout, stop.set)
        clocks = Clocks()
        requests = StoreRequests()
        server = source.server
        server_before = await asyncio.to_thread(server.request_counts) if server is not None else None
        server_pids = [server.pid] if server is not None and server.pid is not None else []
        sampler = Sampler(lambda: usage(postgres).cpu_seconds, lambda: _cpu_self(server_pids))
        server_cpu_before = usage(server_pids).cpu_seconds if server_pids else 0.0
        rss_before, load_before = _current_rss(), os.getloadavg()
        work_before = await _serverwork.read(conn)
        sampler.take(0)
        pg_before, cpu_before, started = usage(postgres).cpu_seconds, _cpu_self(server_pids), time.perf_counter()
        with timed_rows(clocks), SpeedProbe() as probe:
            progress = _Quiet(sampler)
            stats = await _run(conn, source, options, stop=stop, progress=progress, requests=requests)
        wall = time.perf_counter() - started
        # The kernel's high-water mark can lag the current RSS (it is updated lazily), so the peak is at least
        # every RSS seen here.
        peak = max(_peak_rss_bytes(), _current_rss(), rss_before)
        importer_cpu, load_after = _cpu_self(server_pids) - cpu_before, os.getloadavg()
        # The background writer's connection (LEDGERMIRROR_IMPORT_OVERLAP) ended with the import: give its
        # postmaster a moment to reap the backend, whose CPU then counts among its children's times.
        await asyncio.sleep(0.3)
        # Read while the import's backend is alive: once closed, it is a zombie that psutil cannot read until its
        # postmaster reaps it and counts it among its children's times, so a reading taken then missed its CPU.
        postgres_cpu = usage(postgres).cpu_seconds - pg_before
        server_cpu = usage(server_pids).cpu_seconds - server_cpu_before if server_pids else None
        server_work = _serverwork.during(work_before, await _serverwork.read(conn), stats.items)
        timer.cancel()
        server_requests = None
        if server is not None and server_before is not None:
            after = await asyncio.to_thread(server.request_counts)
            server_requests = {kind: count for kind, count in (after - server_before).items() if count}
    finally:
        await conn.close()
    completed = not stop.is_set()
    return Measured(
        stats,
        wall,
        importer_cpu,
        postgres_cpu,
        rss_before,
        peak,
        clocks.rows,
        completed,
        load_before,
        load_after,
        sampler.samples,
        requests,
        server_requests,
        server_cpu,
        shared_buffers,
        probe.samples,
        server_work,
    )


def _current_rss() -> int:
    with Path("/proc/self/statm").open() as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _stream_facts(stream: Path) -> dict[str, Any]:
    truth = stream / "truth.json"
    if not truth.is_file():
        return {}
    document = json.loads(truth.read_text())
    network = document.get("network", {})
    return {
        "transactions": document.get("transactions", {}).get("count"),
        "record_files": document.get("record_files", {}).get("count"),
        "seconds": network.get("seconds"),
        "tps": network.get("tps"),
        "nodes": len(network.get("nodes", [])),
        "seed": network.get("seed"),
    }


def per_million(count: int, transactions: int) -> float:
    return round(count / max(transactions, 1) * 1e6, 1)


def requests_report(source: Source, measured: Measured) -> dict[str, Any]:
    """The source's requests, as the importer's store counted them and (a bucket) as the server did, in all
    and per million transactions; the bytes read."""
    transactions = measured.stats.items
    counted = measured.requests.by_operation()
    total = sum(counted.values())
    result: dict[str, Any] = {
        "counted_by": "importer store" if source.server is None else "importer store and S3 server",
        **counted,
        "total": total,
        "per_million_transactions": {
            **{operation: per_million(count, transactions) for operation, count in counted.items()},
            "total": per_million(total, transactions),
        },
        "per_file": round(total / max(measured.stats.files, 1), 2),
        "bytes_read": measured.requests.bytes_read,
        "bytes_per_transaction": round(measured.requests.bytes_read / max(transactions, 1), 1),
        "megabytes_per_second": round(measured.requests.bytes_read / max(measured.wall, 1e-9) / 1e6, 2),
    }
    if measured.server_requests is not None:
        server = measured.server_requests
        result["server"] = {
            "by_type": dict(sorted(server.items())),
            "total": sum(server.values()),
            "per_million_transactions": per_million(sum(server.values()), transactions),
            "cpu_seconds": round(measured.server_cpu or 0.0, 3),
            "cpu_us_per_transaction": round((measured.server_cpu or 0.0) / max(transactions, 1) * 1e6, 1),
        }
    return result


def tps_of(transactions: int, seconds: float) -> float:
    return round(transactions / max(seconds, 1e-9), 1)


def report(
    source: Source,
    simulate_seconds: float | None,
    measured: Measured,
    counts: dict[str, int],
    copy: CopyLimit | None,
    *,
    window: int = DEFAULT_WINDOW,
) -> dict[str, Any]:
    stats, wall = measured.stats, measured.wall
    items = max(stats.items, 1)
    by_window = windows(measured.samples, window, measured.probes)
    last = by_window[-1] if by_window else None
    last_tps = last["transactions_per_second"] if last else tps_of(stats.items, wall)
    last_cpu_us = (
        last["importer_us_per_transaction"] + last["postgres_us_per_transaction"]
        if last
        else (measured.importer_cpu + measured.postgres_cpu) / items * 1e6
    )
    rows = sum(counts.values())
    cost = stats.cost
    rows_per_second = rows / wall
    tps = stats.items / wall
    result: dict[str, Any] = {
        "stream": {
            "dir": str(source.stream),
            "simulate_seconds": simulate_seconds,
            **_stream_facts(source.stream),
        },
        "source": {
            "location": source.location,
            "kind": "bucket" if source.server is not None else "folder",
            "stream": "blocks" if source.blocks else "records",
            "uploaded_files": source.uploaded,
            "upload_seconds": round(source.upload_seconds, 3),
            "added_latency_ms": round(source.latency * 1000, 1),
        },
        "requests": requests_report(source, measured),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before": [round(load, 2) for load in measured.load_before],
            "load_average_after": [round(load, 2) for load in measured.load_after],
            "shared_buffers": measured.shared_buffers,
            "host_probe_us": _probe_summary(measured.probes),
        },
        "import": {
            "completed": measured.completed,
            "wall_seconds": round(wall, 3),
            "files": stats.files,
            "transactions": stats.items,
            "commits": stats.commits,
            "rows_written": stats.rows,
            "rows_in_tables": rows,
            "transactions_per_second": round(tps, 1),
            "rows_per_second": round(rows_per_second, 1),
        },
        "rows_by_table": dict(sorted(counts.items(), key=lambda item: -item[1])),
        "cpu": {
            "importer_seconds": round(measured.importer_cpu, 3),
            "postgres_seconds": round(measured.postgres_cpu, 3),
            "importer_us_per_transaction": round(measured.importer_cpu / items * 1e6, 1),
            "postgres_us_per_transaction": round(measured.postgres_cpu / items * 1e6, 1),
            "total_us_per_transaction": round((measured.importer_cpu + measured.postgres_cpu) / items * 1e6, 1),
        },
        "postgres_background": measured.server_work,
        "memory": {"importer_rss_before_bytes": measured.rss_before, "importer_peak_rss_bytes": measured.peak_rss},
        "stages_seconds": {
            # download runs ahead on worker threads (prefetch): it overlaps the others
            "download": round(cost.download, 3),
            # the part of it not hidden: the record path's wait for a prefetched file, the block path's wait for
            # the next block (its download clock is that wait: the reads run ahead inside the source)
            "waiting_for_source": round(cost.download_wait if not source.blocks else cost.download, 3),
            "signatures": round(cost.signatures, 3),
            "data_checks": round(cost.data, 3),
            "rows": round(measured.rows_seconds, 3),
            "database_writes": round(stats.write_seconds - measured.rows_seconds, 3),
        },
        "overlap": {
            # LEDGERMIRROR_IMPORT_OVERLAP: transactions written by the background writer while the next was built,
            # its wall seconds, and the part of them the builder waited for (not hidden by building)
            "background_transactions": stats.overlapped,
            "background_snapshots": stats.background_snapshots,
            "background_write_seconds": round(stats.background_write_seconds, 3),
            "builder_wait_seconds": round(stats.write_wait_seconds, 3),
            "reads_that_waited": stats.waited_reads,
            "reads_completed_after_the_commit": stats.deferred_reads,
        },
        "windows": by_window,
        "targets": {
            "sustained_tps": TARGET_TPS,
            "sustained_tps_met": tps >= TARGET_TPS,
            "day_at_100_tps_hours": round(DAY_AT_100_TPS / max(tps, 1e-9) / 3600, 2),
            "day_at_100_tps_target_hours": DAY_TARGET_SECONDS / 3600,
            "day_at_100_tps_met": DAY_AT_100_TPS / max(tps, 1e-9) < DAY_TARGET_SECONDS,
            # the rate where the tables are largest: the last window's wall rate (moved by the load), and the
            # rate its CPU per transaction allows when the importer and PostgreSQL take turns on a free machine
            "last_window_tps": last_tps,
            "last_window_tps_met": last_tps >= TARGET_TPS,
            "last_window_cpu_bound_tps": round(1e6 / max(last_cpu_us, 1e-9), 1),
            "day_at_100_tps_hours_at_last_window": round(DAY_AT_100_TPS / max(last_tps, 1e-9) / 3600, 2),
        },
    }
    if copy is not None:
        copy_rate = copy.rows / max(copy.copy_seconds, 1e-9)
        copy_cpu_per_row = (copy.client_cpu + copy.postgres_cpu) / max(copy.rows, 1)
        import_cpu_per_row = (measured.importer_cpu + measured.postgres_cpu) / max(rows, 1)
        result["copy_limit"] = {
            "rows": copy.rows,
            "copy_seconds": round(copy.copy_seconds, 3),
            "read_back_seconds": round(copy.read_seconds, 3),
            "rows_per_second": round(copy_rate, 1),
            "import_to_copy_ratio": round(rows_per_second / copy_rate, 4),
            # robust to the machine's load: rows per CPU-second (client + PostgreSQL) of each, as a ratio
            "copy_cpu_us_per_row": round(copy_cpu_per_row * 1e6, 3),
            "import_cpu_us_per_row": round(import_cpu_per_row * 1e6, 3),
            "import_to_copy_ratio_by_cpu": round(copy_cpu_per_row / max(import_cpu_per_row, 1e-12), 4),
            "by_table_seconds": {name: round(seconds, 3) for name, seconds in copy.by_table.items()},
        }
    return result


def _probe_summary(probes: list[tuple[float, float]]) -> dict[str, float] | None:
    """The fastest, median and slowest probe of the host's speed over the import (``_hostspeed``)."""
    taken = sorted(took for _, took in probes)
    if not taken:
        return None
    return {"min": round(taken[0], 1), "median": round(statistics.median(taken), 1), "max": round(taken[-1], 1)}


def print_server_work(work: dict[str, Any]) -> None:
    """PostgreSQL's background work during the import, on two lines."""
    wal = ", ".join(f"{name} {work[name]:,}" for name in ("wal_records", "wal_fpi", "wal_bytes") if name in work)
    each = ", ".join(
        f"{name.removesuffix('_per_transaction')} {value}"
        for name, value in work.items()
        if name.endswith("_per_transaction")
    )
    checkpoints = ", ".join(
        f"{name} {value:,}"
        for name, value in work.items()
        if isinstance(value, int) and not name.startswith("wal_")
    )
    print(f"  PostgreSQL's WAL: {wal} ({each} a transaction); {checkpoints}")
    print(f"  autovacuums {work.get('autovacuums', {})}, autoanalyzes {work.get('autoanalyzes', {})}")


def print_report(result: dict[str, Any]) -> None:
    imported, cpu, stages, targets = result["import"], result["cpu"], result["stages_seconds"], result["targets"]
    print(f"stream: {result['stream']}")
    source, requests = result["source"], result["requests"]
    added = f", {source['added_latency_ms']} ms added to every request" if source["added_latency_ms"] else ""
    print(f"source: {source['kind']} {source['location']} ({source['stream']}){added}")
    machine = result["machine"]
    print(
        f"load average (1, 5, 15 min) before the import {machine['load_average_before']}, after "
        f"{machine['load_average_after']}, on {machine['cpus']} CPUs; shared_buffers {machine['shared_buffers']}"
    )
    probe = machine["host_probe_us"]
    if probe is not None:
        print(
            f"the host's speed (a fixed piece of work, its CPU time; more is slower): {probe['min']} to "
            f"{probe['max']} µs, median {probe['median']}"
        )
    note = "" if imported["completed"] else " (stopped at --timeout: partial)"
    print(
        f"imported {imported['transactions']:,} transactions in {imported['files']} files, "
        f"{imported['rows_in_tables']:,} rows, in {imported['wall_seconds']:.1f} s{note}"
    )
    print(f"  {imported['transactions_per_second']:,.0f} tx/s   {imported['rows_per_second']:,.0f} rows/s")
    print(
        f"  CPU per transaction: importer {cpu['importer_us_per_transaction']} µs, "
        f"PostgreSQL {cpu['postgres_us_per_transaction']} µs, total {cpu['total_us_per_transaction']} µs"
    )
    print_windows(result["windows"])
    per_million = requests["per_million_transactions"]
    print(
        f"  requests ({requests['counted_by']}): {requests['total']:,} = list {requests['list']:,}, get "
        f"{requests['get']:,}, head {requests['head']:,}; per million transactions {per_million['total']:,.0f} "
        f"(list {per_million['list']:,.0f}, get {per_million['get']:,.0f}); {requests['per_file']} a file; "
        f"{requests['bytes_read'] / 1e6:,.1f} MB read ({requests['bytes_per_transaction']} bytes a transaction, "
        f"{requests['megabytes_per_second']} MB/s)"
    )
    server = requests.get("server")
    if server is not None:
        print(
            f"  the S3 server answered {server['total']:,} requests ({server['per_million_transactions']:,.0f} "
            f"per million transactions): {server['by_type']}; its CPU {server['cpu_seconds']} s, "
            f"{server['cpu_us_per_transaction']} µs a transaction"
        )
    print_server_work(result["postgres_background"])
    print(f"  importer peak RSS: {result['memory']['importer_peak_rss_bytes'] / 2**20:.0f} MB")
    print("  stages (s): " + ", ".join(f"{name} {seconds}" for name, seconds in stages.items()))
    overlap = result["overlap"]
    if overlap["background_transactions"]:
        print(
            f"  overlap: {overlap['background_transactions']} transactions written in the background "
            f"({overlap['background_snapshots']} of them with a balance snapshot) in "
            f"{overlap['background_write_seconds']} s, the builder waited {overlap['builder_wait_seconds']} s "
            f"for them ({overlap['reads_that_waited']} reads waited for a commit, "
            f"{overlap['reads_completed_after_the_commit']} files' log addresses completed after it)"
        )
    for name, count in result["rows_by_table"].items():
        print(f"    {name:<32} {count:>12,}")
    copy = result.get("copy_limit")
    if copy is not None:
        print(
            f"COPY limit: {copy['rows']:,} rows in {copy['copy_seconds']:.1f} s = {copy['rows_per_second']:,.0f} "
            f"rows/s; the import reaches {copy['import_to_copy_ratio']:.1%} of it"
        )
        print(
            f"  by CPU (client + PostgreSQL, robust to the load): COPY {copy['copy_cpu_us_per_row']} µs a row, "
            f"the import {copy['import_cpu_us_per_row']} µs a row: {copy['import_to_copy_ratio_by_cpu']:.1%}"
        )
    print(
        f"targets: {targets['sustained_tps']:,} tx/s {'met' if targets['sustained_tps_met'] else 'missed'}; "
        f"a day at 100 TPS in {targets['day_at_100_tps_hours']} h "
        f"({'met' if targets['day_at_100_tps_met'] else 'missed'}: "
        f"under {targets['day_at_100_tps_target_hours']} h); last window "
        f"{targets['last_window_tps']:,.0f} tx/s ({'met' if targets['last_window_tps_met'] else 'missed'}; "
        f"{targets['last_window_cpu_bound_tps']:,.0f} tx/s by its CPU per transaction), a day at that rate in "
        f"{targets['day_at_100_tps_hours_at_last_window']} h"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/import", description=__doc__.split("\n\n")[0])
    p.add_argument("--stream", type=Path, help="an existing simulated stream folder (default: simulate one)")
    p.add_argument("--seconds", type=int, default=300, help="simulated seconds (default 300)")
    p.add_argument("--tps", type=int, default=100, help="simulated transactions per second (default 100)")
    p.add_argument("--nodes", type=int, default=4, help="simulated nodes (default 4)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="records",
        help="simulate record files (default), wrapped record blocks or native blocks; blocks are imported with "
        "--stream blocks (with --stream DIR: which of its streams to import)",
    )
    p.add_argument(
        "--bucket",
        action="store_true",
        help="upload the stream to a real S3 server on 127.0.0.1 (weed mini) and import it from the bucket",
    )
    p.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="wait this long before every request of the source (a distant bucket's latency); default none",
    )
    p.add_argument("--data-dir", type=Path, help="folder of the fresh embedded database (default: temporary)")
    p.add_argument("--no-fsync", action="store_true", help="a throwaway server (fsync off), as the tests use")
    p.add_argument(
        "--shared-buffers-mb",
        type=int,
        default=0,
        help="the embedded server's shared_buffers in MiB (LEDGERMIRROR_EMBEDDED_SHARED_BUFFERS_MB); 0: "
        "the service's default, a quarter of the machine's memory; 128: initdb's",
    )
    p.add_argument(
        "--max-wal-size-mb",
        type=int,
        default=Settings().embedded_max_wal_size_mb,
        help="the embedded server's max_wal_size in MiB (LEDGERMIRROR_EMBEDDED_MAX_WAL_SIZE_MB; %(default)s)",
    )
    p.add_argument("--files-per-transaction", type=int, default=DEFAULT_FILES_PER_TRANSACTION)
    p.add_argument("--no-copy-limit", action="store_true", help="skip the COPY comparison")
    p.add_argument(
        "--overlap",
        action="store_true",
        help="build the next transaction's rows while this one is written (LEDGERMIRROR_IMPORT_OVERLAP=true)",
    )
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed to the simulator and the import")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    p.add_argument("--end-date", help="import the stream up to this time (as ledgermirror import --end-date)")
    p.add_argument(
        "--window", type=int, default=DEFAULT_WINDOW, help="transactions per window of the rates by window"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on from what the database in --data-dir holds (a copy of one an earlier run left): measures a "
        "late stretch of a long stream without importing its start again; implies --no-copy-limit",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.resume and args.data_dir is None:
        p.error("--resume needs --data-dir")
    with contextlib.ExitStack() as cleanup:
        work = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="bench-import-")))
        stream: Path = args.stream or work / "stream"
        simulate_seconds = None
        if args.stream is None:
            print(f"simulating {args.seconds * args.tps:,} transactions ...", file=sys.stderr, flush=True)
            simulate_seconds = simulate(
                stream,
                seconds=args.seconds,
                tps=args.tps,
                nodes=args.nodes,
                seed=args.seed,
                timeout=args.timeout,
                fmt=args.format,
            )
        source = Source(stream, blocks=args.format != "records")
        if args.bucket:
            source = _to_bucket(cleanup, source, work / "weed")
        source = dataclasses.replace(source, latency=max(args.latency_ms, 0.0) / 1000)
        data_dir: Path = args.data_dir or work / "db"
        settings = Settings(
            embedded_shared_buffers_mb=max(args.shared_buffers_mb, 0),
            embedded_max_wal_size_mb=max(args.max_wal_size_mb, 64),
        )
        prepared = prepare(settings, data_dir=data_dir, durable=not args.no_fsync)
        cleanup.callback(prepared.stop)
        balances = stream / "initial-balances.pb.gz"
        options = ImportOptions(
            once=True,
            address_book=stream / "addressbook.bin",
            initial_balances=balances if balances.is_file() else None,
            files_per_transaction=max(args.files_per_transaction, 1),
            end=parse_date(args.end_date) if args.end_date else None,
            start=START_OF_TIME if args.bucket else None,
            # a bucket's listing policy (the heaviest third of the nodes) also when its store is wrapped
            list_every_node=False if args.bucket else None,
            overlap=args.overlap,
        )
        print("importing ...", file=sys.stderr, flush=True)
        pgdata = str(data_dir.resolve() / "pgdata")
        held = asyncio.run(_counted(prepared.owner_url)) if args.resume else {}
        measured = asyncio.run(
            measure_import(prepared.owner_url, pgdata, source, options, args.timeout, resume=args.resume)
        )
        # the rows this run added (all of them in a fresh database)
        counts = {
            name: count - held.get(name, 0) for name, count in asyncio.run(_counted(prepared.owner_url)).items()
        }
        copy = None
        if not args.no_copy_limit and not args.resume:
            print("COPY of the same rows into a twin database ...", file=sys.stderr, flush=True)
            copy = asyncio.run(copy_limit(prepared.owner_url, counts, pgdata))
        result = report(source, simulate_seconds, measured, counts, copy, window=args.window)
    print_report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _to_bucket(cleanup: contextlib.ExitStack, source: Source, data_dir: Path) -> Source:
    """Start ``weed mini`` (stopped by ``cleanup``), upload the stream's folders to it (the nodes' keys and
    the top-level files, which the importer reads locally, stay out) and point the importer's bucket source
    at it (the server's credentials and endpoint in this process's environment, restored by ``cleanup``)."""
    print("starting weed mini and uploading the stream ...", file=sys.stderr, flush=True)
    server = cleanup.enter_context(weed_mini(data_dir))
    started = time.perf_counter()
    uploaded = 0
    for folder in sorted(source.stream.iterdir()):
        if folder.is_dir() and folder.name not in _LOCAL_ONLY:
            uploaded += upload(server, folder, f"{BUCKET_PREFIX}/{folder.name}")
    seconds = time.perf_counter() - started
    for name, value in server.environment().items():
        previous = os.environ.get(name)
        cleanup.callback(_restore, name, previous)
        os.environ[name] = value
    return Source(source.stream, source.blocks, server, uploaded, seconds)


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


async def _counted(owner_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(owner_url)
    try:
        return await count_rows(conn)
    finally:
        await conn.close()
