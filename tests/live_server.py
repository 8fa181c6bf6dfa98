"""A real server on 127.0.0.1 with the services' own uvicorn configuration, dawdling raw clients, and load."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn
from tests.status.live import free_port

from ledgermirror import http_server
from ledgermirror.settings import Settings


@contextlib.contextmanager
def bounded_server(app: Any, settings: Settings, port: int | None = None) -> Iterator[int]:
    """Serve ``app`` in a thread with the services' own configuration (on ``port``, else a free one); yields the
    port."""
    port = free_port() if port is None else port
    server = uvicorn.Server(http_server.bounded_config(app, settings, host="127.0.0.1", port=port, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def open_slowly(port: int, first_bytes: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if first_bytes:
        sock.sendall(first_bytes)
    return sock


def until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started = time.monotonic()
    received = b""
    with sock:
        try:
            while chunk := sock.recv(4096):
                received += chunk
        except ConnectionResetError:
            pass
    return received, time.monotonic() - started


async def load_through(
    base: str, paths: tuple[str, ...], outage: asyncio.Task[None], after_outage: float, clients: int = 40
) -> list[tuple[str, int, bytes]]:
    """GET requests from ``clients`` clients at once until ``after_outage`` seconds after ``outage`` is done;
    each path template gets a fresh number (``{}``) per request, so no answer comes from a cache. Returns
    ``(path, status, body)`` of every answer."""
    answers: list[tuple[str, int, bytes]] = []
    numbers = itertools.count()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    stop_at: list[float] = []
    async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=60, limits=limits) as client:

        async def one_client() -> None:
            while not stop_at or time.monotonic() < stop_at[0]:
                number = next(numbers)
                path = paths[number % len(paths)].format(100 + number)
                response = await client.get(path)
                answers.append((path, response.status_code, response.content))

        async def stopper() -> None:
            await outage
            stop_at.append(time.monotonic() + after_outage)

        await asyncio.gather(stopper(), *(one_client() for _ in range(clients)))
    return answers
