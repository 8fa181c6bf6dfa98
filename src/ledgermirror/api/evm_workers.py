"""The worker processes ``POST /api/v1/contracts/call`` runs its EVM in (``evm/worker.py``), so a heavy call
takes a core, not the API's interpreter lock: the event loop keeps answering the other routes meanwhile.

``contract_call_concurrency`` workers at most per API worker, started on first use and reused: each a fresh
interpreter (``python -m ledgermirror.evm.worker``, nothing of the API's state inherited, whatever started the API)
talking over a socket pair. A job's questions are answered on the event loop
while it runs; a worker whose job runs past its deadline, or that dies, is killed and a replacement started at
once (a fresh interpreter takes about a second to import py-evm).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any

from ledgermirror.evm.calls import Job, JobResult
from ledgermirror.evm.execution import TimeBudgetExceeded

_STOP_SECONDS = 2.0


class WorkerDied(Exception):
    """A worker process ended in the middle of a job."""


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


class WorkerFailed(Exception):
    """A job ended in an unexpected error of the EVM (a bug): the request is a ``500``, the text logged."""


class _Worker:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ledgermirror.evm.worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
        self.conn = Connection(ours.detach())

    def send(self, message: Any) -> None:
        try:
            self.conn.send(message)
        except OSError as error:
            raise WorkerDied(str(error)) from error

    async def receive(self, deadline: float) -> Any:
        """The worker's next message, or :class:`TimeBudgetExceeded` at ``deadline``."""
        if not self.conn.poll():
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()
            descriptor = self.conn.fileno()
            loop.add_reader(descriptor, _wake, ready)
            try:
                await asyncio.wait_for(ready, max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                raise TimeBudgetExceeded() from None
            finally:
                loop.remove_reader(descriptor)
        try:
            return self.conn.recv()
        except (EOFError, OSError) as error:
            raise WorkerDied(str(error)) from error

    def stop(self) -> None:
        self.conn.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(_STOP_SECONDS)


class WorkerPool:
    """At most ``size`` jobs at once; the rest wait in order for a turn."""

    def __init__(self, size: int) -> None:
        self.turns = asyncio.Semaphore(size)
        self._idle: list[_Worker] = []

    async def run(self, job: Job, answer: Callable[[tuple[Any, ...]], Awaitable[Any]]) -> JobResult:
        """Run ``job`` in an idle worker (a turn must be held), answering its questions with ``answer``."""
        worker = self._idle.pop() if self._idle else _Worker()
        try:
            worker.send(job)
            while True:
                message = await worker.receive(job.deadline)
                if message[0] == "done":
                    result: JobResult = message[1]
                    break
                if message[0] == "timeout":
                    raise TimeBudgetExceeded()
                if message[0] == "error":
                    raise WorkerFailed(message[1])
                worker.send(await answer(message))
        except BaseException:
            worker.stop()  # its job is half done: never reused
            self._idle.append(_Worker())  # its replacement starts now, ready sooner for the next call
            raise
        self._idle.append(worker)
        return result

    def close(self) -> None:
        """Stop every idle worker (at the app's shutdown)."""
        while self._idle:
            self._idle.pop().stop()
