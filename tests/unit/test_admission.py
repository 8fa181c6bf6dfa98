"""The admission middleware: a bounded number of requests at work, the rest served in arrival order, 503 for a
request that waited too long, health routes never queued."""

from __future__ import annotations

import asyncio

import orjson
from starlette.types import Receive, Scope, Send

from ledgermirror.api.admission import Admission
from ledgermirror.conformance.inprocess import Reply, get, send_request


class Recorder:
    """An app that holds each request until released, and records the order and the concurrency it saw."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.running = 0
        self.most = 0
        self.gates: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        self.started.append(path)
        self.running += 1
        self.most = max(self.most, self.running)
        gate = self.gates.setdefault(path, asyncio.Event())
        await gate.wait()
        self.running -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": path.encode()})


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_requests_past_the_limit_wait_and_are_served_in_arrival_order() -> None:
    async def run() -> None:
        inner = Recorder()
        app = Admission(inner, limit=2, wait_seconds=30)
        paths = [f"/api/v1/r{index}" for index in range(6)]
        for path in paths:
            inner.gates[path] = asyncio.Event()
        tasks = []
        for path in paths:
            tasks.append(asyncio.create_task(get(app, path)))
            await _settle()
        assert inner.started == paths[:2]
        for path in paths:
            inner.gates[path].set()
            await _settle()
        replies = await asyncio.gather(*tasks)
        assert inner.started == paths
        assert inner.most == 2
        assert [reply.body.decode() for reply in replies] == paths

    asyncio.run(run())


def test_a_request_that_waits_too_long_gets_503_with_our_error_body() -> None:
    async def run() -> None:
        inner = Recorder()
        app = Admission(inner, limit=1, wait_seconds=0.05)
        first = asyncio.create_task(get(app, "/api/v1/slow"))
        await _settle()
        refused = await get(app, "/api/v1/next")
        assert refused.status == 503
        assert orjson.loads(refused.body) == {
            "_status": {"messages": [{"message": "Too many requests in progress: try again shortly"}]}
        }
        assert inner.started == ["/api/v1/slow"]
        inner.gates["/api/v1/slow"].set()
        assert (await first).status == 200

    asyncio.run(run())


def test_health_routes_are_never_queued() -> None:
    async def run() -> None:
        inner = Recorder()
        app = Admission(inner, limit=1, wait_seconds=30)
        busy = asyncio.create_task(get(app, "/api/v1/busy"))
        await _settle()
        inner.gates["/health/readiness"] = asyncio.Event()
        inner.gates["/health/readiness"].set()
        ready = await asyncio.wait_for(get(app, "/health/readiness"), 5)
        assert ready.status == 200
        inner.gates["/api/v1/busy"].set()
        await busy

    asyncio.run(run())


def test_requests_with_a_body_are_never_queued() -> None:
    """A POST's handler reads its body after admission: a slow body must not hold a slot."""

    async def run() -> None:
        inner = Recorder()
        app = Admission(inner, limit=1, wait_seconds=30)
        busy = asyncio.create_task(get(app, "/api/v1/busy"))
        await _settle()
        inner.gates["/api/v1/network/fees"] = asyncio.Event()
        inner.gates["/api/v1/network/fees"].set()
        posted = await asyncio.wait_for(send_request(app, "POST", "/api/v1/network/fees", body=b"x"), 5)
        assert posted.status == 200
        inner.gates["/api/v1/busy"].set()
        await busy

    asyncio.run(run())


def test_waits_that_end_leave_the_slots_as_they_were() -> None:
    """Several requests time out together, one is cancelled as it is given a slot: afterwards the limit still
    holds and no slot is lost."""

    async def run() -> None:
        inner = Recorder()
        app = Admission(inner, limit=1, wait_seconds=0.05)
        given: asyncio.Task[Reply] | None = None

        async def first_then_cancel() -> Reply:
            reply = await get(app, "/api/v1/first")  # its slot is handed to "cancelled" in this same step...
            assert given is not None
            given.cancel()  # ...which is cancelled before it runs: the next in line must get the slot
            return reply

        first = asyncio.create_task(first_then_cancel())
        await _settle()
        refused = await asyncio.gather(*(get(app, f"/api/v1/late{index}") for index in range(3)))
        assert [reply.status for reply in refused] == [503, 503, 503]
        app.wait_seconds = 30
        given = asyncio.create_task(get(app, "/api/v1/cancelled"))
        behind = asyncio.create_task(get(app, "/api/v1/behind"))
        await _settle()
        inner.gates["/api/v1/first"].set()
        assert (await first).status == 200
        await _settle()
        assert inner.started == ["/api/v1/first", "/api/v1/behind"]
        inner.gates["/api/v1/behind"].set()
        assert (await behind).status == 200
        inner.gates["/api/v1/again"] = asyncio.Event()
        inner.gates["/api/v1/again"].set()
        assert (await get(app, "/api/v1/again")).status == 200
        assert inner.most == 1

    asyncio.run(run())
