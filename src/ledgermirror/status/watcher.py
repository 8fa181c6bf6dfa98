"""Runs the evaluator (:mod:`.automation`) in the status service: on a schedule, and at once when the importer
commits files (it notifies ``db.evidence.CHANNEL`` in its commit transaction). The importer may run in another
process or on another host: everything goes through the database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg

from ledgermirror.clock import Clock
from ledgermirror.db import evidence
from ledgermirror.db.errors import CONNECTION_FAILURES
from ledgermirror.status.automation import Automation
from ledgermirror.status.wire import from_ns
from ledgermirror.ttl_cache import TtlCache

_log = logging.getLogger(__name__)
RETRY_SECONDS = 5.0


class Watcher:
    """The evaluator's loop: one owner connection listening on the channel, one evaluation at a time."""

    def __init__(
        self, automation: Automation, url: str, clock: Clock, every_seconds: float, cache: TtlCache[bytes]
    ) -> None:
        self.automation = automation
        self.url = url
        self.clock = clock
        self.every_seconds = every_seconds
        self.cache = cache
        self.evaluations = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="status-evaluator")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _notified(self, *_: Any) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                conn = await asyncpg.connect(self.url, server_settings={"application_name": "ledgermirror-status"})
            except CONNECTION_FAILURES as error:
                _log.warning("evaluator cannot connect", extra={"error": str(error)})
                await asyncio.sleep(RETRY_SECONDS)
                continue
            try:
                await conn.add_listener(evidence.CHANNEL, self._notified)
                await self._loop(conn)
            except CONNECTION_FAILURES as error:
                _log.warning("evaluator lost its connection", extra={"error": str(error)})
                await asyncio.sleep(RETRY_SECONDS)
            except Exception:  # an evaluation that fails is logged and tried again, the loop goes on
                _log.exception("evaluation failed")
                await asyncio.sleep(RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await conn.close()

    async def _loop(self, conn: asyncpg.Connection[Any]) -> None:
        while True:
            self._wake.clear()
            evaluation = await self.automation.evaluate(conn, from_ns(self.clock.now_ns()))
            self.evaluations += 1
            if evaluation.wrote:
                self.cache.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.every_seconds)
