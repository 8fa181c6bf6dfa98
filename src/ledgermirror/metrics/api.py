"""The query API's own metrics: response cache hits and misses, the database pool (size, in use, waiting),
statement timeouts, database-unavailable answers (503) and opcode replays by whether they matched the stored
result. Failures arrive through :class:`ledgermirror.db.pool.PoolObserver`, which this class implements; the
pool gauges are sampled from the pool's own counts (:meth:`ApiMetrics.sample_pool`) every second and before each
scrape, which costs a query nothing."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from ledgermirror.db.pool import Database
from ledgermirror.metrics.http import HttpMetrics

SAMPLE_SECONDS = 1.0


class ApiMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.http = HttpMetrics(self.registry, "api", batched=True)
        self.cache_hit_count = 0
        """Response cache hits and misses since the last :meth:`publish` (plain integers: see ``HttpMetrics``)."""
        self.cache_miss_count = 0
        cache = Counter(
            "ledgermirror_api_response_cache",
            "Response cache lookups of GET endpoints, by result",
            ["result"],
            registry=self.registry,
        )
        self.cache_hits = cache.labels("hit")
        self.cache_misses = cache.labels("miss")
        pool = Gauge(
            "ledgermirror_api_db_pool_connections",
            "Database pool connections: open (size), in use by a query, and requests waiting for one",
            ["state"],
            multiprocess_mode="livesum",
            registry=self.registry,
        )
        self.pool_size = pool.labels("size")
        self.pool_in_use = pool.labels("in_use")
        self.pool_waiting = pool.labels("waiting")
        self.statement_timeouts = Counter(
            "ledgermirror_api_statement_timeouts",
            "Statements cancelled by the statement timeout",
            registry=self.registry,
        )
        self.unavailable = Counter(
            "ledgermirror_api_database_unavailable",
            "Queries that failed because the database was unreachable or out of time (answered 503)",
            registry=self.registry,
        )

        replays = Counter(
            "ledgermirror_api_opcode_replays",
            "Opcode traces (GET .../opcodes) whose replay matched the stored contract result, or did not "
            "(success, gas used or output differ); unchecked when the stored result has nothing to compare",
            ["result"],
            registry=self.registry,
        )
        self.replays_matched = replays.labels("match")
        self.replays_mismatched = replays.labels("mismatch")
        self.replays_unchecked = replays.labels("unchecked")

    def publish(self, database: Database | None) -> None:
        """Everything counted in plain integers, and the pool's gauges, handed to ``prometheus_client``: before
        each scrape and every second."""
        self.http.publish()
        hits, misses = self.cache_hit_count, self.cache_miss_count
        self.cache_hit_count = self.cache_miss_count = 0
        if hits:
            self.cache_hits.inc(hits)
        if misses:
            self.cache_misses.inc(misses)
        self.sample_pool(database)

    def sample_pool(self, database: Database | None) -> None:
        if database is None:
            return
        self.pool_size.set(database.open_connections())
        self.pool_in_use.set(database.in_use)
        self.pool_waiting.set(database.waiting)

    # PoolObserver
    def timed_out(self) -> None:
        self.statement_timeouts.inc()

    def failed(self) -> None:
        self.unavailable.inc()
