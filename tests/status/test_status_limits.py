"""``status serve``'s bounds on a real server: slow headers get 408, a slow management body is cut off, and
other clients are served meanwhile."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from tests.live_server import bounded_server, open_slowly, until_closed
from tests.status.harness import Status

from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings

LIMITS = Settings(http_header_timeout_seconds=1, http_body_timeout_seconds=1)
SLACK = 2.5


def test_slow_clients_are_cut_off_and_others_served(
    status: Status, clean: Prepared, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = status.new_key()
    app = create_status_app(StatusSettings(), clean.api_url, clean.owner_url)
    with bounded_server(app, LIMITS) as port, httpx.Client(trust_env=False, timeout=10) as client:
        started = time.monotonic()
        slow_headers = open_slowly(port, b"GET /api/v2/summary.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow_body = open_slowly(
            port,
            b"POST /manage/v1/components HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {key}\r\n".encode()
            + b'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"name": "',
        )
        assert client.get(f"http://127.0.0.1:{port}/api/v2/status.json").status_code == 200
        received, _ = until_closed(slow_headers)
        assert received.startswith(b"HTTP/1.1 408 ")
        received, _ = until_closed(slow_body)
        assert b" 201 " not in received.split(b"\r\n", 1)[0]
        assert (
            time.monotonic() - started
            < max(LIMITS.http_header_timeout_seconds, LIMITS.http_body_timeout_seconds) + SLACK
        )
        assert client.get(f"http://127.0.0.1:{port}/api/v2/status.json").status_code == 200
    assert status.get("components.json")["components"] == [], "the cut-off body created nothing"
    left = [record for record in caplog.records if "disconnect" in record.getMessage()]
    assert left and left[0].levelno <= logging.INFO, "the management handler saw its client go"
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
    assert all(record.exc_info is None for record in caplog.records)
