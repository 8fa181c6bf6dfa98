"""The API's batched request metrics (``metrics/http.HttpMetrics(batched=True)``) publish exactly the samples that
``prometheus_client``'s own ``inc``/``observe`` make. The batched histogram adds to prometheus_client's bucket and
sum values directly, so this also fails if a release of prometheus_client changes them."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ledgermirror.metrics.http import LATENCY_BUCKETS, HttpMetrics

# On a bound, just below and above one, far beyond the last, and zero.
_LATENCIES = [0.0, 0.0004, 0.001, 0.0011, 0.003, 0.05, 0.0500001, 0.7, 10.0, 42.0, *LATENCY_BUCKETS]


def _samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def _record(metrics: HttpMetrics) -> None:
    for index, seconds in enumerate(_LATENCIES):
        route = "/api/v1/tokens" if index % 3 else "/api/v1/blocks"
        metrics.record(route, "GET", 200 if index % 4 else 404, seconds)


def test_batched_metrics_publish_the_samples_observe_makes() -> None:
    plain_registry, batched_registry = CollectorRegistry(), CollectorRegistry()
    plain = HttpMetrics(plain_registry, "api")
    batched = HttpMetrics(batched_registry, "api", batched=True)
    _record(plain)
    _record(batched)
    assert _samples(batched_registry) != _samples(plain_registry)  # nothing handed over before publish
    batched.publish()
    assert _samples(batched_registry) == _samples(plain_registry)
    # a second round adds to the first, and publishing twice adds nothing more
    _record(plain)
    _record(batched)
    batched.publish()
    batched.publish()
    assert _samples(batched_registry) == _samples(plain_registry)


def test_in_flight_is_published() -> None:
    registry = CollectorRegistry()
    batched = HttpMetrics(registry, "api", batched=True)
    batched.started()
    batched.started()
    batched.finished()
    batched.publish()
    assert _samples(registry)[("ledgermirror_http_requests_in_flight", (("service", "api"),))] == 1
