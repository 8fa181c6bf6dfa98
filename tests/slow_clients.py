"""A real server on 127.0.0.1 with the services' own uvicorn configuration, and raw clients that dawdle."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from tests.status.live import free_port

from ledgermirror import http_server
from ledgermirror.settings import Settings


@contextlib.contextmanager
def bounded_server(app: Any, settings: Settings) -> Iterator[int]:
    """Serve ``app`` in a thread with the services' own configuration; yields the port."""
    port = free_port()
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
