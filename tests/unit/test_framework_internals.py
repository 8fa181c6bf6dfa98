"""The internals of uvicorn and Starlette that our code relies on, named one by one, so that an upgrade that
moves one fails here rather than in production (``pyproject.toml`` bounds both at the versions tested).

- ``http_server.BoundedHttpToolsProtocol`` subclasses uvicorn's ``HttpToolsProtocol``: it overrides the
  constructor and seven callbacks, reads ``loop``, ``transport`` and ``cycle.response_complete``, and relies on
  uvicorn writing a response's head (``HTTP/1.1 <status>`` and the headers) in one write and its body in the
  next, ``100 Continue`` alone, through ``self.transport`` (``HeadHoldingTransport`` sniffs those bytes);
  ``BoundedConfig`` passes the protocol class as ``http=`` and uvicorn's server builds it with keywords;
  ``run`` hands ``Multiprocess`` its own socket.
- ``api/routing.IndexedRouter`` subclasses Starlette's ``Router``: it overrides ``app`` (which the router's
  ``__init__`` binds as its ``middleware_stack``), tries routes with ``matches``/``handle`` and ``Match.FULL``,
  sets ``scope["router"]``/``scope["route"]`` as Starlette does, reads ``Route.path``/``Mount.path``, and
  ``api/app.py`` replaces ``Starlette.router`` after construction (the app builds its middleware stack lazily,
  from ``self.router``, on its first call).
"""

from __future__ import annotations

import asyncio
import inspect
import socket
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from uvicorn import Config, Server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState
from uvicorn.supervisors import Multiprocess

from ledgermirror.api.routing import IndexedRouter
from ledgermirror.http_server import BoundedConfig, BoundedHttpToolsProtocol, HeadHoldingTransport


def _parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_uvicorn_builds_our_protocol_class_with_the_keywords_its_constructor_takes() -> None:
    assert _parameters(HttpToolsProtocol.__init__) == ["self", "config", "server_state", "app_state", "_loop"]
    source = inspect.getsource(Server)
    assert "config.http_protocol_class(" in source
    for keyword in ("config=config", "server_state=self.server_state", "app_state=", "_loop=_loop"):
        assert keyword in source, keyword
    config = BoundedConfig(lambda *args: None, header_timeout=1, body_timeout=2)
    config.load()
    assert config.http_protocol_class is BoundedHttpToolsProtocol  # a class given as ``http`` is used as is
    assert _parameters(Multiprocess.__init__) == ["self", "config", "sockets"]
    for name in ("uds", "fd", "host", "port", "workers"):
        assert hasattr(config, name), name
    assert callable(config.bind_socket)
    assert "started" in vars(Server(config))


def test_the_protocol_callbacks_we_override_are_uvicorns_with_the_same_parameters() -> None:
    callbacks = {
        "connection_made": ["self", "transport"],
        "connection_lost": ["self", "exc"],
        "data_received": ["self", "data"],
        "on_message_begin": ["self"],
        "on_headers_complete": ["self"],
        "on_message_complete": ["self"],
        "on_response_complete": ["self"],
    }
    for name, parameters in callbacks.items():
        assert name in vars(HttpToolsProtocol), name  # uvicorn's own, not asyncio.Protocol's empty default
        assert _parameters(getattr(HttpToolsProtocol, name)) == parameters, name
        assert name in vars(BoundedHttpToolsProtocol), name
    assert "response_complete" in inspect.getsource(RequestResponseCycle.__init__)


async def _app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        await receive()  # reading the body is what sends ``100 Continue``
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


class _Writes:
    """The socket transport, with every write uvicorn makes through the protocol's ``transport`` noted."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def test_uvicorn_writes_a_head_then_its_body_and_continue_alone_through_the_protocols_transport() -> None:
    """What ``HeadHoldingTransport`` sniffs, on uvicorn's own protocol over a real socket."""

    async def run() -> tuple[list[bytes], bytes, BoundedHttpToolsProtocol]:
        loop = asyncio.get_running_loop()
        config = Config(_app, access_log=False, log_config=None, server_header=False, date_header=False)
        config.load()
        noted: list[_Writes] = []

        class Noting(HttpToolsProtocol):
            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                noted.append(_Writes(transport))
                super().connection_made(noted[-1])  # type: ignore[arg-type]

        ours, theirs = socket.socketpair()
        client = socket.socket(fileno=theirs.detach())
        client.setblocking(False)
        state = ServerState()
        await loop.connect_accepted_socket(lambda: Noting(config=config, server_state=state, app_state={}), ours)
        await loop.sock_sendall(
            client, b"POST / HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 1\r\n\r\n"
        )
        await asyncio.sleep(0.05)
        await loop.sock_sendall(client, b"x")
        received = b""
        while not received.endswith(b"ok"):
            received += await loop.sock_recv(client, 4096)
        # and our subclass: the protocol's transport is the head-holding one, its attributes where we read them
        bounded_config = BoundedConfig(_app, header_timeout=1, body_timeout=2)
        bounded_config.load()
        bounded = BoundedHttpToolsProtocol(bounded_config, server_state=ServerState(), app_state={}, _loop=loop)
        bounded.connection_made(noted[0].transport)
        client.close()
        await asyncio.sleep(0)
        return noted[0].writes, received, bounded

    writes, received, bounded = asyncio.run(run())
    assert writes == [
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n",
        b"ok",
    ]
    assert received == b"".join(writes)
    assert isinstance(bounded.transport, HeadHoldingTransport)
    assert isinstance(bounded.loop, asyncio.AbstractEventLoop)
    assert bounded.cycle is None  # no request yet: ``_headers_too_slow`` reads it as "nothing of ours on the wire"


def test_starlettes_router_binds_its_app_at_construction_and_dispatches_as_ours_does() -> None:
    assert _parameters(Router.app) == ["self", "scope", "receive", "send"]
    assert "self.middleware_stack = self.app" in inspect.getsource(Router.__init__)
    assert "await self.middleware_stack(" in inspect.getsource(Router.__call__)
    init = inspect.signature(Router.__init__).parameters
    assert "redirect_slashes" in init and "lifespan" in init
    assert _parameters(BaseRoute.matches) == ["self", "scope"]
    assert _parameters(BaseRoute.handle) == ["self", "scope", "receive", "send"]
    assert Match.FULL in Match
    search = inspect.getsource(Router.app)
    assert 'scope["router"] = self' in search and 'scope["route"] = route' in search
    assert "scope.update(child_scope)" in search

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.scope["route"].path)

    route, mount = Route("/api/v1/hello", hello), Mount("/static", routes=[])
    assert (route.path, mount.path) == ("/api/v1/hello", "/static")
    match, child = route.matches({"type": "http", "path": "/api/v1/hello", "method": "GET", "root_path": ""})
    assert match is Match.FULL and isinstance(child, dict)


def test_a_starlette_app_builds_its_middleware_stack_from_the_router_it_has_at_its_first_call() -> None:
    app = Starlette(routes=[])
    assert app.middleware_stack is None
    assert "self.router" in inspect.getsource(Starlette.build_middleware_stack)
    assert "self.middleware_stack = self.build_middleware_stack()" in inspect.getsource(Starlette.__call__)

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("indexed " + request.scope["route"].path)

    app.router = IndexedRouter([Route("/api/v1/hello", hello)], redirect_slashes=False)

    async def call() -> list[Any]:
        sent: list[Any] = []

        async def receive() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "GET",
            "path": "/api/v1/hello",
            "root_path": "",
            "query_string": b"",
            "headers": [],
        }
        await app(scope, receive, send)
        return sent

    sent = asyncio.run(call())
    assert sent[0]["status"] == 200 and sent[-1]["body"] == b"indexed /api/v1/hello"
