"""A real server on 127.0.0.1, configured as ``serve`` and ``status serve`` configure theirs: a client that sends
its headers or body too slowly is cut off within the bound, and other clients are served meanwhile."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import httpx
import pytest
from tests.live_server import bounded_server, open_slowly, until_closed

from ledgermirror import http_server
from ledgermirror.api.app import create_app
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

LIMITS = Settings(http_header_timeout_seconds=1, http_body_timeout_seconds=1, http_keep_alive_seconds=5)
SLACK = 2.5
"""Seconds allowed beyond a bound on this shared, loaded machine."""


@pytest.fixture(scope="module")
def port(database: Prepared) -> Iterator[int]:
    with bounded_server(create_app(LIMITS, database.api_url), LIMITS) as served:
        yield served


def _healthy(port: int) -> bool:
    with httpx.Client(trust_env=False, timeout=10) as client:
        return client.get(f"http://127.0.0.1:{port}/health/liveness").status_code == 200


@pytest.mark.parametrize(
    "first_bytes",
    [b"", b"GET /api/v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: appl"],
    ids=["nothing", "partial-headers"],
)
def test_slow_headers_get_408_and_the_connection_closes(port: int, first_bytes: bytes) -> None:
    slow = [open_slowly(port, first_bytes) for _ in range(3)]
    assert _healthy(port), "another client is served while slow ones hang"
    for sock in slow:
        received, seconds = until_closed(sock)
        assert seconds < LIMITS.http_header_timeout_seconds + SLACK
        assert received.startswith(b"HTTP/1.1 408 ")
    assert _healthy(port)


def test_slow_body_is_cut_off(port: int) -> None:
    head = (
        b"POST /api/v1/network/fees HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/protobuf\r\nContent-Length: 1000\r\n\r\n"
    )
    slow = open_slowly(port, head + b"\x0a\x05")
    started = time.monotonic()
    assert _healthy(port)
    for _ in range(10):  # trickling keeps no connection alive past the total bound
        try:
            slow.sendall(b"\x00")
        except OSError:
            break
        time.sleep(0.3)
    received, _ = until_closed(slow)
    assert time.monotonic() - started < LIMITS.http_body_timeout_seconds + SLACK
    assert b"200 OK" not in received
    assert _healthy(port)


def test_a_prompt_request_on_a_kept_alive_connection_is_served(port: int) -> None:
    with httpx.Client(trust_env=False, timeout=10) as client:
        for _ in range(3):
            assert client.get(f"http://127.0.0.1:{port}/health/liveness").status_code == 200
            time.sleep(0.6)  # over half the header bound between requests: idle time is keep-alive's, not ours


def test_the_services_use_the_bounds_of_the_settings() -> None:
    settings = Settings(
        http_header_timeout_seconds=3,
        http_body_timeout_seconds=4,
        http_keep_alive_seconds=6,
        http_max_connections=7,
    )
    config = http_server.bounded_config("x:y", settings, host="127.0.0.1", port=1)
    assert (config.header_timeout, config.body_timeout) == (3, 4)
    assert (config.timeout_keep_alive, config.limit_concurrency) == (6, 7)
    assert config.http is http_server.BoundedHttpToolsProtocol


def test_a_client_that_leaves_mid_body_is_logged_without_a_stack_trace(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    head = (
        b"POST /api/v1/network/fees HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/protobuf\r\nContent-Length: 1000\r\n\r\n\x0a\x05"
    )
    with open_slowly(port, head):
        time.sleep(0.3)  # the handler is reading the body when the client goes
    deadline = time.monotonic() + 10
    while not any("disconnect" in record.getMessage() for record in caplog.records):
        assert time.monotonic() < deadline, [record.getMessage() for record in caplog.records]
        time.sleep(0.05)
    time.sleep(0.2)
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []
    assert all(record.exc_info is None for record in caplog.records)
    left = [record for record in caplog.records if "disconnect" in record.getMessage()]
    assert left[0].levelno <= logging.INFO
