"""Admission: at most ``limit`` requests of a worker are being worked on at once; the others wait their turn.

Without it a worker starts every request it reads, and with 64 or 256 connections open the event loop
interleaves dozens of handlers: each one's CPU is spread over the whole burst, queries queue inside the pool
and inside PostgreSQL's scheduler, and a request can be overtaken again and again (a long tail). With it,
requests beyond the limit wait in arrival order (``asyncio.Semaphore`` wakes its waiters first in, first out)
before any work is done for them, and each admitted request runs with the CPU and connections it needs.

The limit defaults to the connection pool's size (``LEDGERMIRROR_POOL_MAX_SIZE``): more requests in flight than
connections only move the queue into the pool. A request that waits longer than ``wait_seconds`` is answered
``503`` with our error body, so overload shows as fast refusals rather than requests hanging. The health
routes are never queued: readiness must answer while the service is busy. Nor are requests with a body (the
``POST`` fee estimate): a handler reads its body after admission, and a client trickling a body would hold a
slot for the whole body timeout, a way to starve everyone else.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Receive, Scope, Send

from ledgermirror.api.errors import ServiceUnavailable
from ledgermirror.api.responses import error_response

BYPASS_PREFIX = "/health/"
ADMITTED_METHODS = frozenset({"GET", "HEAD"})


class Admission:
    def __init__(self, app: ASGIApp, *, limit: int, wait_seconds: float) -> None:
        if limit < 1:
            raise ValueError("the admission limit must be at least 1")
        self.app = app
        self.limit = limit
        self.wait_seconds = wait_seconds
        self._slots: asyncio.Semaphore | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ADMITTED_METHODS
            or scope["path"].startswith(BYPASS_PREFIX)
        ):
            await self.app(scope, receive, send)
            return
        if self._slots is None:  # made in the serving loop, on the first request
            self._slots = asyncio.Semaphore(self.limit)
        slots = self._slots
        if slots.locked():
            try:
                async with asyncio.timeout(self.wait_seconds):
                    await slots.acquire()
            except TimeoutError:
                await error_response(ServiceUnavailable("Too many requests in progress: try again shortly"))(
                    scope, receive, send
                )
                return
        else:
            await slots.acquire()
        try:
            await self.app(scope, receive, send)
        finally:
            slots.release()
