"""Prometheus metrics of the three services (``prometheus_client``; no hand-written exposition).

- :mod:`.exposition`: the ``/metrics`` answer, aggregated across worker processes in multiprocess mode.
- :mod:`.http`: per-request metrics of an ASGI service (route template, method, status class, latency).
- :mod:`.api`, :mod:`.status`, :mod:`.importer`: each service's own metrics.

Metrics live on a registry owned by the application (no module-level state); the layers below (``db/``,
``ledger/``) never import this package: they report through small observer protocols.
"""
