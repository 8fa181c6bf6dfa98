"""Admission: at most ``limit`` requests of a worker are being worked on at once; the others wait their turn.

Without it a worker starts every request it reads, and with 64 or 256 connections open the event loop
interleaves dozens of handlers: each one's CPU is spread over the whole burst, queries queue inside the pool
and inside PostgreSQL's scheduler, and a request can be overtaken again and again (a long tail). With it,
requests beyond the limit wait in arrival order (first in, first out)
before any work is done for them, and each admitted request runs with the CPU and connections it needs.

Waiting costs no timer per request: under load nearly every request waits, and a timer each (``asyncio.timeout``)
was measurable. Requests wait in one line with their deadlines, which grow with arrival; one timer, armed
for the first in line, turns away everyone whose time is up when it fires and is armed again for the next.

The limit defaults to the connection pool's size (``LEDGERMIRROR_POOL_MAX_SIZE``): more requests in flight than
connections only move the queue into the pool. A request that waits longer than ``wait_seconds`` is answered
``503`` with our error body, so overload shows as refusals rather than requests hanging. That wait is its own
budget (``LEDGERMIRROR_ADMISSION_WAIT_SECONDS``, 30 s), not the statement timeout's: on a cold cache every
request is slow and the line behind them long, and with the 5 s of a statement as the bound, a server whose
line was still moving refused requests that only the cold cache had slowed (``bench/coldstart``). The health
routes are never queued: readiness must answer while the service is busy. Nor are requests with a body (the
``POST`` fee estimate): a handler reads its body after admission, and a client trickling a body would hold a
slot for the whole body timeout, a way to starve everyone else.
"""

from __future__ import annotations

import asyncio
from collections import deque

from starlette.types import ASGIApp, Receive, Scope, Send

from ledgermirror.api.errors import ServiceUnavailable
from ledgermirror.api.responses import error_response

BYPASS_PREFIX = "/health/"
ADMITTED_METHODS = frozenset({"GET", "HEAD"})
REFUSAL = "Too many requests in progress: try again shortly"


class Admission:
    def __init__(self, app: ASGIApp, *, limit: int, wait_seconds: float) -> None:
        if limit < 1:
            raise ValueError("the admission limit must be at least 1")
        self.app = app
        self.limit = limit
        self.wait_seconds = wait_seconds
        self._free = limit
        self._line: deque[tuple[float, asyncio.Future[None]]] = deque()
        """Waiting requests in arrival order, each with the loop time its wait ends."""
        self._expiry: asyncio.TimerHandle | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ADMITTED_METHODS
            or scope["path"].startswith(BYPASS_PREFIX)
        ):
            await self.app(scope, receive, send)
            return
        if not self.take_free() and not await self.wait_turn():
            await error_response(ServiceUnavailable(REFUSAL))(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.pass_on()

    def take_free(self) -> bool:
        """Take a free slot, if one is free and nobody waits (then the caller must :meth:`pass_on` when done)."""
        if self._free:
            self._free -= 1
            return True
        return False

    async def wait_turn(self) -> bool:
        """Wait in line for a slot (then the caller must :meth:`pass_on` when done); False when the wait ran
        out."""
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        self._line.append((loop.time() + self.wait_seconds, turn))
        if self._expiry is None:
            self._expiry = loop.call_at(self._line[0][0], self._expire)
        try:
            await turn
        except TimeoutError:
            return False
        except BaseException:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self.pass_on()  # given the slot as it was cancelled: the next in line takes it
            else:
                turn.cancel()
            raise
        return True

    def pass_on(self) -> None:
        """A slot came free: the first in line still waiting gets it, or it stays free."""
        line = self._line
        while line:
            _, turn = line.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._free += 1

    def _expire(self) -> None:
        """Turn away everyone whose wait has ended; arm the timer again for the first still in line."""
        self._expiry = None
        line = self._line
        loop = asyncio.get_running_loop()
        now = loop.time()
        while line and (line[0][1].done() or line[0][0] <= now):
            _, turn = line.popleft()
            if not turn.done():
                turn.set_exception(TimeoutError())
        if line:
            self._expiry = loop.call_at(line[0][0], self._expire)
