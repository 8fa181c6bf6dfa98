"""Serve a status app on 127.0.0.1 with uvicorn in a thread, for tests that drive real clients or a browser."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn
from starlette.applications import Starlette

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serve(app: Starlette) -> Iterator[str]:
    """Run ``app`` on a free 127.0.0.1 port; yields its base URL (no trailing slash)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the status app did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def local_only_env() -> dict[str, str]:
    """The environment without proxy settings, with 127.0.0.1 exempted from any proxy."""
    env = {key: value for key, value in os.environ.items() if key not in PROXY_VARIABLES}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@contextlib.contextmanager
def no_proxies() -> Iterator[None]:
    """Clear proxy variables of this process for the duration (in-process clients read them)."""
    saved = {key: os.environ.pop(key) for key in PROXY_VARIABLES if key in os.environ}
    old_no = os.environ.get("NO_PROXY"), os.environ.get("no_proxy")
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    try:
        yield
    finally:
        os.environ.update(saved)
        for key, value in zip(("NO_PROXY", "no_proxy"), old_no, strict=True):
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
