"""The ``/metrics`` answer in the Prometheus text format.

One process: the service's own registry. Several worker processes (``serve --workers N``): the parent
prepares an empty folder and names it in ``PROMETHEUS_MULTIPROC_DIR`` before the workers start;
``prometheus_client`` then keeps every worker's values in files there, and a scrape (answered by whichever
worker gets it) sums them with its ``MultiProcessCollector``: counters and histograms add up, in-flight and pool
gauges are live sums over running workers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, values
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
PATH = "/metrics"


def prepare_multiprocess(folder: Path) -> None:
    """Empty ``folder`` and name it for the worker processes about to start (before they import
    ``prometheus_client``, which picks its value store when first imported), and for this process (which may
    serve the API itself, beside the gRPC server's process)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.environ[MULTIPROCESS_ENV] = str(folder)
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]  # this process's own metrics created from now on go there too


def render(registry: CollectorRegistry) -> bytes:
    """The text exposition of ``registry``, or of every worker's values in multiprocess mode."""
    folder = os.environ.get(MULTIPROCESS_ENV)
    if folder:
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=folder)  # type: ignore[no-untyped-call]
        return generate_latest(merged)
    return generate_latest(registry)


def route(registry: CollectorRegistry, refresh: Callable[[], None] | None = None) -> Route:
    """``GET``/``HEAD /metrics``: never cached, not compressed, in the text format 0.0.4 (which every
    Prometheus version reads)."""

    async def metrics(request: Request) -> Response:
        if refresh is not None:
            refresh()  # sampled values of this process, fresh for this scrape
        body = render(registry)
        headers = {"cache-control": "no-store"}
        return Response(body, media_type=CONTENT_TYPE_PLAIN_0_0_4, headers=headers)

    return Route(PATH, metrics, methods=["GET", "HEAD"])
