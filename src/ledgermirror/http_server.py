"""How both services (``serve`` and ``status serve``) run under uvicorn: bounded reads, bounded connections.

uvicorn bounds idle keep-alive time (``timeout_keep_alive``) and the connections and tasks of a worker
(``limit_concurrency``: beyond it, new requests get ``503``), but not how long a client may take to send a
request: a client that sends half its headers, or announces a body it never sends, holds its connection open
forever. :class:`BoundedHttpToolsProtocol` (uvicorn's httptools protocol with a read deadline) adds that bound:

- **headers**: from the connection's start (or, on a kept-alive connection, the request's first byte) to the end
  of the headers, at most ``header_timeout`` seconds; past it the client gets ``408`` and the connection closes;
- **body**: from the end of the headers to the end of the body, at most ``body_timeout`` seconds in total (a
  client trickling one byte a second gains nothing); past it the connection closes, and the handler waiting for
  the body sees a client disconnect.

And it sends a response's head and body in one system call: uvicorn writes the head as soon as the application
starts its response and the body when it comes, two writes (on loopback, two trips through the TCP stack, and
two packets for the client to read). :class:`HeadHoldingTransport` keeps the head back until the first body
write, then hands both to the socket together (``writelines``: one vectored write); a response that ends with
no body write (``HEAD``) sends its head when it completes; ``100 Continue`` is never held.

With several workers, each listens on a socket of its own (:class:`SharedPort`), so that the kernel spreads
connections over them. The bounds travel on :class:`BoundedConfig` (a ``uvicorn.Config``), which worker
processes receive as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from typing import Any, SupportsIndex

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.supervisors import Multiprocess

from ledgermirror.settings import Settings

_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 16\r\nconnection: close\r\n\r\nRequest Timeout\n"
)
STARTUP_FAILURE = 3
"""uvicorn's exit status when the server could not start (as ``uvicorn.run``)."""


_HEAD = b"HTTP/1.1 "
_INTERIM = b"HTTP/1.1 1"


class HeadHoldingTransport:
    """A transport that holds a response head (what uvicorn writes first, ``HTTP/1.1 <status>`` and the
    headers) until the next write, and writes both at once. Everything else passes through."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head: bytes | None = None

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.writelines((head, data))
        elif data.startswith(_HEAD) and not data.startswith(_INTERIM):
            self._head = bytes(data)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BoundedConfig(uvicorn.Config):
    """A uvicorn configuration that serves with :class:`BoundedHttpToolsProtocol` and carries its bounds."""

    def __init__(self, app: Any, *, header_timeout: float, body_timeout: float, **options: Any) -> None:
        super().__init__(app, http=BoundedHttpToolsProtocol, **options)
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout


_IDLE, _HEADERS, _BODY = 0, 1, 2
"""Where a connection is in reading a request: between requests, in its headers, in its body."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a deadline on reading each request's headers and body.

    The deadline's timer is armed only for a request still incomplete when the bytes at hand have been read:
    a request that arrives whole, as nearly all do, costs no timer at all (it cost four timer operations when
    the timer followed the parser's callbacks)."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.header_timeout: float = getattr(config, "header_timeout", 10.0)
        self.body_timeout: float = getattr(config, "body_timeout", 30.0)
        self.read_timer: asyncio.TimerHandle | None = None
        self.reading = _IDLE
        """What of a request the parser is in (its callbacks set it)."""
        self.timed = _IDLE
        """What the armed timer bounds (``_IDLE``: no timer)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeadHoldingTransport(transport))  # type: ignore[arg-type]
        self._arm(_HEADERS)  # the first request's headers are due from the connection's start

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.reading != self.timed:  # a stage began or ended with these bytes
            if self.reading == _IDLE:
                self._disarm()
            else:
                self._arm(self.reading)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading = _HEADERS

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.reading = _BODY

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.reading = _IDLE

    def on_response_complete(self) -> None:
        transport: Any = self.transport
        transport.flush()  # a response with no body write (HEAD) still sends its head
        super().on_response_complete()

    def _arm(self, stage: int) -> None:
        self._disarm()
        if stage == _HEADERS:
            self.read_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)
        else:
            self.read_timer = self.loop.call_later(self.body_timeout, self._body_too_slow)
        self.timed = stage

    def _disarm(self) -> None:
        if self.read_timer is not None:
            self.read_timer.cancel()
            self.read_timer = None
        self.timed = _IDLE

    def _headers_too_slow(self) -> None:
        self.read_timer = None
        self.timed = _IDLE
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:  # nothing of ours is on the wire: answer 408
            self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()

    def _body_too_slow(self) -> None:
        self.read_timer = None
        self.timed = _IDLE
        if not self.transport.is_closing():
            self.transport.close()  # the handler reading the body sees the client go


def bounded_config(app: Any, settings: Settings, *, host: str, port: int, **options: Any) -> BoundedConfig:
    """The uvicorn configuration of a service: the read and connection bounds of ``settings``, no access log,
    no ``server`` header, logging left to :mod:`ledgermirror.log`."""
    return BoundedConfig(
        app,
        host=host,
        port=port,
        header_timeout=settings.http_header_timeout_seconds,
        body_timeout=settings.http_body_timeout_seconds,
        limit_concurrency=settings.http_max_connections,
        timeout_keep_alive=settings.http_keep_alive_seconds,
        access_log=False,
        log_config=None,
        server_header=False,
        **options,
    )


class SharedPort(socket.socket):
    """The supervisor's hold on the service's address, and what makes each worker listen on a socket of its own.

    uvicorn's workers share one listening socket, and whichever worker wakes first accepts every connection
    waiting: 64 keep-alive connections opened together were split 35/29, 19/45, 4/60 and 64/0 between two
    workers in four runs, and with 64/0 one worker did all the work at two thirds of the throughput while the
    other idled. Here the supervisor binds the address with ``SO_REUSEPORT`` and never listens on it (it keeps
    the port reserved); each worker this socket is sent to unpickles it as a new socket bound to the same address
    (:func:`worker_socket`), on which its server listens, and the kernel spreads new connections evenly over the
    listening sockets by their addresses. A worker that dies takes its socket out of the group; the one that
    replaces it joins with a new one."""

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        host, port = self.getsockname()[:2]
        return (worker_socket, (int(self.family), host, port))


def worker_socket(family: int, host: str, port: int) -> socket.socket:
    """A new socket bound to the shared address, for one worker to listen on."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def shared_port(config: uvicorn.Config) -> socket.socket:
    """The socket to hand the workers: a :class:`SharedPort` for a TCP address where the system spreads
    connections over ``SO_REUSEPORT`` sockets (Linux), uvicorn's one shared socket otherwise."""
    if config.uds or config.fd is not None or not sys.platform.startswith("linux"):
        return config.bind_socket()
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = SharedPort(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((config.host, config.port))
    except OSError as error:
        sock.close()
        logging.getLogger("uvicorn.error").error(error)
        sys.exit(1)
    return sock


def run(config: BoundedConfig) -> None:
    """Serve until stopped: in this process, or in ``config.workers`` worker processes (what ``uvicorn.run``
    does with a configuration it built itself), each listening on its own socket (:class:`SharedPort`)."""
    server = uvicorn.Server(config)
    if config.workers > 1:
        Multiprocess(config, sockets=[shared_port(config)]).run()
        return
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
