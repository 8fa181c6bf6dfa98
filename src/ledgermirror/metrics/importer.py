"""The importer's metrics, served on ``ledgermirror import --metrics-port`` while it runs.

:class:`MetricsProgress` wraps the importer's :class:`~ledgermirror.importer.progress.Progress`: at each commit
it adds what the cumulative :class:`~ledgermirror.importer.progress.ImportStats` gained since the last one
(files, transactions, rows by table, seconds by stage, node signatures), so the pipelines need no other hook.
A refused file counts under the check that refused it. The stream lag is computed at scrape time. The same
port answers ``/health/readiness``: 503 naming the cause while the importer waits after a fault of the
database (unavailable, disk full), else 200.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import orjson
from prometheus_client import CollectorRegistry, Gauge, make_wsgi_app
from prometheus_client import Counter as PromCounter
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from ledgermirror.importer.progress import ImportStats, Progress

STAGES = ("download", "signatures", "verify", "write")
STORE_OPERATIONS = ("list", "get", "head")
DATABASE_FAULT_CAUSES = ("unavailable", "disk_full")
"""The causes ``importer/outage.py`` names (this module imports nothing of the importer)."""


class StoreCounts(Protocol):
    """What a source counts of its requests (``importer.sources.StoreRequests``; named here by shape, as this
    module imports nothing of the importer)."""

    bytes_read: int

    def by_operation(self) -> dict[str, int]: ...


class _StoreRequests(Collector):
    """The watched sources' request counts, read at scrape time (the sources count them as plain integers)."""

    def __init__(self) -> None:
        self.watched: list[StoreCounts] = []

    def collect(self) -> Iterator[CounterMetricFamily]:
        requests = CounterMetricFamily(
            "ledgermirror_importer_store_requests",
            "Requests to the source (folder or bucket) by operation: list (a LIST page or a directory scan), "
            "get (found or not), head",
            labels=["operation"],
        )
        totals: Counter[str] = Counter()
        for counts in self.watched:
            totals.update(counts.by_operation())
        for operation in STORE_OPERATIONS:
            requests.add_metric([operation], totals[operation])
        yield requests
        read = CounterMetricFamily("ledgermirror_importer_store_read_bytes", "Bytes read from the source")
        read.add_metric([], sum(counts.bytes_read for counts in self.watched))
        yield read


@dataclasses.dataclass(slots=True)
class _Seen:
    files: int = 0
    items: int = 0
    tables: Counter[str] = dataclasses.field(default_factory=Counter)
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    valid: int = 0
    rejected: int = 0


class ImporterMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.files = PromCounter(
            "ledgermirror_importer_files", "Stream files (record files or blocks) imported", registry=self.registry
        )
        self.transactions = PromCounter(
            "ledgermirror_importer_transactions", "Transactions imported", registry=self.registry
        )
        self.rows = PromCounter(
            "ledgermirror_importer_rows", "Rows written, by table", ["table"], registry=self.registry
        )
        self.stage_seconds = PromCounter(
            "ledgermirror_importer_stage_seconds",
            "Seconds spent per stage: download, node signature checks, parsing and data checks (verify), writes",
            ["stage"],
            registry=self.registry,
        )
        self.verification_failures = PromCounter(
            "ledgermirror_importer_verification_failures",
            "Files refused, by the check that refused them",
            ["check"],
            registry=self.registry,
        )
        self.source_errors = PromCounter(
            "ledgermirror_importer_source_errors",
            "Failures to list or read the source (folder, bucket, block node), each retried",
            registry=self.registry,
        )
        self.node_signatures = PromCounter(
            "ledgermirror_importer_node_signatures",
            "Node signature files checked: valid and agreeing with consensus, or rejected",
            ["result"],
            registry=self.registry,
        )
        self.last_consensus = Gauge(
            "ledgermirror_importer_last_consensus_timestamp_seconds",
            "Consensus end of the newest imported file (Unix seconds)",
            registry=self.registry,
        )
        self.lag = Gauge(
            "ledgermirror_importer_stream_lag_seconds",
            "Now minus the consensus end of the newest imported file (computed at scrape time)",
            registry=self.registry,
        )
        self.database_faults = PromCounter(
            "ledgermirror_importer_database_faults",
            "Imports ended by the database: unavailable (restarting, unreachable) or disk_full; each retried "
            "while following",
            ["cause"],
            registry=self.registry,
        )
        self.waiting_for_database = Gauge(
            "ledgermirror_importer_waiting_for_database",
            "1 while the importer waits to try again after a fault of the database, by cause",
            ["cause"],
            registry=self.registry,
        )
        self._store_requests = _StoreRequests()
        self.registry.register(self._store_requests)
        for cause in DATABASE_FAULT_CAUSES:
            self.database_faults.labels(cause)
            self.waiting_for_database.labels(cause).set(0)
        self._newest: float | None = None
        self._fault: tuple[str, str] | None = None
        self.lag.set_function(self._lag)
        for stage in STAGES:
            self.stage_seconds.labels(stage)
        # keyed by id() with the stats object kept alive beside it, so that a later run's stats cannot be
        # given a freed object's id and inherit its counts
        self._seen: dict[int, tuple[ImportStats, _Seen]] = {}

    def _lag(self) -> float:
        return float("nan") if self._newest is None else max(time.time() - self._newest, 0.0)

    def observe(self, stats: ImportStats) -> None:
        """Add what ``stats`` (cumulative, one per pipeline run) gained since it was last observed."""
        kept = self._seen.get(id(stats))
        seen = kept[1] if kept is not None and kept[0] is stats else _Seen()
        self.files.inc(stats.files - seen.files)
        self.transactions.inc(stats.items - seen.items)
        for table, rows in (stats.tables - seen.tables).items():
            self.rows.labels(table).inc(rows)
        cost = stats.cost
        seconds = {
            "download": cost.download,
            "signatures": cost.signatures,
            "verify": cost.data,
            "write": stats.write_seconds,
        }
        for stage, total in seconds.items():
            self.stage_seconds.labels(stage).inc(max(total - seen.seconds.get(stage, 0.0), 0.0))
        self.node_signatures.labels("valid").inc(cost.valid_signatures - seen.valid)
        self.node_signatures.labels("rejected").inc(len(cost.rejected_signatures) - seen.rejected)
        self._seen[id(stats)] = (
            stats,
            _Seen(
                stats.files,
                stats.items,
                Counter(stats.tables),
                seconds,
                cost.valid_signatures,
                len(cost.rejected_signatures),
            ),
        )
        if stats.last_consensus_end is not None:
            self._newest = stats.last_consensus_end / 1e9
            self.last_consensus.set(self._newest)

    def watch_store(self, counts: StoreCounts) -> None:
        """Serve ``counts`` (a source's request counts, kept up to date by the source) in
        ``ledgermirror_importer_store_requests_total`` and ``ledgermirror_importer_store_read_bytes_total``."""
        self._store_requests.watched.append(counts)

    def database_fault(self, cause: str | None, message: str = "") -> None:
        """The importer starts waiting after a fault of the database (``cause``, told in ``message``), or stops
        waiting (None)."""
        self._fault = None if cause is None else (cause, message)
        for known in DATABASE_FAULT_CAUSES:
            self.waiting_for_database.labels(known).set(1 if known == cause else 0)
        if cause is not None:
            self.database_faults.labels(cause).inc()

    def readiness(self) -> tuple[str, bytes]:
        """The readiness answer: ``503`` with the cause while waiting after a fault of the database, else 200."""
        if self._fault is None:
            return "200 OK", orjson.dumps({"status": "UP"})
        cause, message = self._fault
        return "503 Service Unavailable", orjson.dumps({"status": "DOWN", "cause": cause, "message": message})

    def refused(self, error: Exception) -> None:
        """A refused file counts under its check; a source that failed (listing, download) as a source error."""
        check = getattr(error, "check", None)
        if isinstance(check, str):
            self.verification_failures.labels(check).inc()
        else:
            self.source_errors.inc()


class MetricsProgress:
    """A :class:`~ledgermirror.importer.progress.Progress` that records metrics, then tells ``inner``."""

    def __init__(self, inner: Progress, metrics: ImporterMetrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def committed(self, stats: ImportStats) -> None:
        self.metrics.observe(stats)
        self.inner.committed(stats)

    def waiting(self, stats: ImportStats, seconds: float) -> None:
        self.inner.waiting(stats, seconds)

    def refused(self, error: Exception, *, retrying: bool) -> None:
        self.metrics.refused(error)
        self.inner.refused(error, retrying=retrying)

    def finished(self, stats: ImportStats) -> None:
        self.metrics.observe(stats)
        self.inner.finished(stats)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        return None


def _app(metrics: ImporterMetrics) -> WSGIApplication:
    exposition: WSGIApplication = make_wsgi_app(metrics.registry)

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/health/readiness":
            status, body = metrics.readiness()
            start_response(status, [("Content-Type", "application/json"), ("Cache-Control", "no-store")])
            return [body]
        return exposition(environ, start_response)

    return app


def serve(metrics: ImporterMetrics, host: str, port: int) -> Callable[[], None]:
    """Serve ``/health/readiness`` (503 naming the cause while the importer waits after a fault of the
    database) and ``/metrics`` (any other path, as ``prometheus_client``'s server does) on a daemon thread;
    returns the function that stops it and closes its socket. Raises ``OSError`` when the port cannot be
    listened on."""
    server = make_server(host, port, _app(metrics), _Server6 if ":" in host else _Server, _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
