"""Sending one GET through an ASGI application in this process, without sockets or an HTTP client library."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from starlette.types import ASGIApp, Message


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


async def get(app: ASGIApp, url: str, headers: dict[str, str] | None = None) -> Reply:
    return await send_request(app, "GET", url, headers)


async def send_request(
    app: ASGIApp, method: str, url: str, headers: dict[str, str] | None = None, body: bytes = b""
) -> Reply:
    parts = urlsplit(url)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(parts.path),
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "root_path": "",
        "headers": [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    status = 0
    response_headers: dict[str, str] = {}
    chunks: list[bytes] = []
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for name, value in message.get("headers", []):
                response_headers[name.decode("latin-1").lower()] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return Reply(status, response_headers, b"".join(chunks))


class LifespanFailed(RuntimeError):
    pass


class Lifespan:
    """Runs an ASGI app's startup on enter and its shutdown on exit, as a server would."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Lifespan:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}

        async def serve() -> None:
            await self.app(scope, self._inbox.get, self._outbox.put)

        self._task = asyncio.create_task(serve())
        await self._inbox.put({"type": "lifespan.startup"})
        message = await self._outbox.get()
        if message["type"] != "lifespan.startup.complete":
            raise LifespanFailed(message.get("message", "startup failed"))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inbox.put({"type": "lifespan.shutdown"})
        await self._outbox.get()
        if self._task is not None:
            await self._task
