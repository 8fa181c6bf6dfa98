"""The status service's ASGI app: the public ``/api/v2`` JSON, the HTML page (``/``), the feeds
(``/history.atom``, ``/history.rss``) and the management API, nothing else.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from ledgermirror.clock import Clock, SystemClock
from ledgermirror.db.connections import MAX_IDLE_SECONDS
from ledgermirror.db.errors import CONNECTION_FAILURES
from ledgermirror.metrics import exposition
from ledgermirror.metrics.http import HttpMetricsMiddleware
from ledgermirror.status import http, manage, page, public, v1
from ledgermirror.status.automation import Automation
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.http import body_cache
from ledgermirror.status.state import StatusState
from ledgermirror.status.watcher import Watcher

_log = logging.getLogger(__name__)


def create_status_app(
    settings: StatusSettings,
    read_url: str,
    write_url: str | None = None,
    clock: Clock | None = None,
    *,
    max_idle_seconds: float = MAX_IDLE_SECONDS,
    automation: Automation | None = None,
) -> Starlette:
    """``read_url``: the read-only role (public endpoints). ``write_url``: the owner (management; None = off).
    ``max_idle_seconds``: how long a free database connection is kept (``Settings.db_max_idle_seconds``).
    ``automation``: the evaluator, run on the owner connection while the app runs (needs ``write_url``)."""
    clock = clock or SystemClock()
    state = StatusState(
        settings,
        clock,
        read_url,
        write_url,
        body_cache(clock, settings.cache_seconds),
        max_idle_seconds=max_idle_seconds,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await state.open()
        if automation is not None and write_url is not None:
            state.watcher = Watcher(automation, write_url, clock, settings.evaluate_seconds, state.cache)
            state.watcher.start()
        try:
            yield
        finally:
            if state.watcher is not None:
                await state.watcher.stop()
            await state.close()

    async def not_found(request: Request, exc: Exception) -> Response:
        return http.not_found()

    async def unavailable(request: Request, exc: Exception) -> Response:
        _log.warning("database unavailable", extra={"error": str(exc)})
        return Response(b"", status_code=503, headers={**http.CORS, "retry-after": "5"})

    async def disconnected(request: Request, exc: Exception) -> Response:
        _log.info("client disconnected before the request was read", extra={"path": request.url.path})
        return Response(b"", status_code=499)

    app = Starlette(
        routes=[
            *public.ROUTES,
            *page.ROUTES,
            *manage.ROUTES,
            *v1.ROUTES,
            exposition.route(state.metrics.registry),
        ],
        lifespan=lifespan,
        middleware=[Middleware(HttpMetricsMiddleware, metrics=state.metrics.http)],
        exception_handlers={
            404: not_found,
            ClientDisconnect: disconnected,
            **dict.fromkeys(CONNECTION_FAILURES, unavailable),
        },
    )
    app.state.status = state
    return app
