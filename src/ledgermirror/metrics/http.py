"""Per-request metrics of an ASGI service: requests by route template (never the raw path, so ids do not
multiply the series), method and status class; latency by route; requests in flight.

The middleware must sit inside any middleware that copies the scope, so that it sees the ``route`` the router
records in the scope it was given. Requests no route matched are counted under ``route="unmatched"``.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted by name; any other is ``other`` (a client must not be able to add series at will)."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class HttpMetrics:
    """The request metrics of one service (``service`` label: ``api`` or ``status``).

    ``batched`` (the API's): requests in flight and the request counts are kept in plain integers and handed to
    ``prometheus_client`` by :meth:`publish`, which the service calls before each scrape and every second (so
    another worker's figures reach a scrape at most a second late, as the pool gauges do); each of them through
    ``prometheus_client`` took a lock and three calls per request, 6 % of a one-row answer's instructions. So is
    the latency histogram: a request adds one to its bucket's plain count and its seconds to a plain sum
    (``Histogram.observe`` took two locks and a walk of the bounds, 3,500 instructions a request), and
    :meth:`publish` adds them to the histogram's own bucket and sum values: the samples a scrape reads are the
    ones ``observe`` would have made."""

    def __init__(self, registry: CollectorRegistry, service: str, *, batched: bool = False) -> None:
        self.service = service
        self.batched = batched
        self.active = 0
        """Requests being served now (published as the in-flight gauge when ``batched``)."""
        self._unpublished: dict[tuple[str, str, int], int] = {}
        self.requests = Counter(
            "ledgermirror_http_requests",
            "HTTP requests answered, by route template, method and status class",
            ["service", "route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "ledgermirror_http_request_duration_seconds",
            "Time from the request's arrival to the end of its response, by route template",
            ["service", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "ledgermirror_http_requests_in_flight",
            "Requests being served now",
            ["service"],
            multiprocess_mode="livesum",
            registry=registry,
        ).labels(service)
        self._counted: dict[tuple[str, str, int], Any] = {}
        self._timed: dict[str, Any] = {}
        self._unobserved: dict[str, list[float]] = {}
        """Per route template: the count of each bucket (``LATENCY_BUCKETS``, then +Inf) and, last, the sum."""

    def started(self) -> None:
        """A request is being served."""
        if self.batched:
            self.active += 1
        else:
            self.in_flight.inc()

    def finished(self) -> None:
        """A request's answer is done."""
        if self.batched:
            self.active -= 1
        else:
            self.in_flight.dec()

    def publish(self) -> None:
        """Hand the batched figures to ``prometheus_client`` (nothing to do unless ``batched``)."""
        if not self.batched:
            return
        self.in_flight.set(self.active)
        unpublished, self._unpublished = self._unpublished, {}
        for (template, method, status_class), count in unpublished.items():
            self._counter(template, method, status_class).inc(count)
        unobserved, self._unobserved = self._unobserved, {}
        for template, counts in unobserved.items():
            histogram = self._histogram(template)
            # prometheus_client's own values, what observe adds to: one per bucket (not cumulative), and the sum
            buckets = histogram._buckets
            for index in range(len(counts) - 1):
                if counts[index]:
                    buckets[index].inc(counts[index])
            histogram._sum.inc(counts[-1])

    def _histogram(self, template: str) -> Any:
        """The route's labelled latency histogram (looked up once, then kept)."""
        histogram = self._timed.get(template)
        if histogram is None:
            histogram = self._timed[template] = self.latency.labels(self.service, template)
        return histogram

    def _counter(self, template: str, method: str, status_class: int) -> Any:
        """The labelled child (looked up once, then kept: ~1 µs a request)."""
        counter = self._counted.get((template, method, status_class))
        if counter is None:
            counter = self.requests.labels(self.service, template, method, f"{status_class}xx")
            self._counted[(template, method, status_class)] = counter
        return counter

    def record(self, template: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request and its latency."""
        status_class = status // 100
        if self.batched:
            key = (template, method, status_class)
            self._unpublished[key] = self._unpublished.get(key, 0) + 1
            counts = self._unobserved.get(template)
            if counts is None:
                counts = self._unobserved[template] = [0.0] * (len(LATENCY_BUCKETS) + 2)
            counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1  # the first bound >= seconds, as observe
            counts[-1] += seconds
        else:
            self._counter(template, method, status_class).inc()
            self._histogram(template).observe(seconds)


class HttpMetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        metrics = self.metrics
        metrics.started()
        try:
            await self.app(scope, receive, send_status)
        finally:
            metrics.finished()
            route = scope.get("route")
            template = getattr(route, "path", UNMATCHED) if route is not None else UNMATCHED
            method = scope["method"] if scope["method"] in METHODS else "other"
            metrics.record(template, method, status, time.perf_counter() - started)
