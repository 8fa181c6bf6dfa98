"""The interactive docs page as a person uses it: headless Chromium (Debian's ``chromium``), driven through the
DevTools protocol, loads ``/api/v1/docs`` from a real server on 127.0.0.1, sees the routes grouped by tag in the
reference's order, expands one route, presses "Try it out" and "Execute", and reads the server's answer.

Skipped when ``chromium`` is not installed (``.ci/run`` installs it where apt-get is available).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.status.live import free_port, local_only_env, no_proxies, serve
from tests.support import Ledger
from websockets.sync.client import ClientConnection, connect

from ledgermirror.api.app import create_app
from ledgermirror.api.openapi import TAGS
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",
    "--window-size=1200,2000",
]
WAIT_SECONDS = 60


class Page:
    """One Chromium tab over the DevTools protocol: evaluate JavaScript, wait for a condition."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.ids = itertools.count(1)

    def evaluate(self, expression: str) -> Any:
        number = next(self.ids)
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        self.socket.send(json.dumps({"id": number, "method": "Runtime.evaluate", "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=WAIT_SECONDS))
            if message.get("id") == number:
                result = message["result"]
                assert "exceptionDetails" not in result, result
                return result["result"].get("value")

    def wait_for(self, expression: str, *, shown: str = "document.body.innerText.slice(0, 3000)") -> Any:
        """The value of ``expression`` once it is truthy; on a timeout the error holds ``shown``'s value."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"never true: {expression}; the page shows: {self.evaluate(shown)}")


def _page_socket_url(port: int) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                pages = [item for item in json.load(answer) if item.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("chromium's DevTools endpoint did not come up")
        time.sleep(0.2)


def _chromium(url: str, tmp_path: Path) -> Iterator[Page]:
    assert CHROMIUM is not None
    port = free_port()
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}", url]
    process = subprocess.Popen(command, env=local_only_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with no_proxies(), connect(_page_socket_url(port), max_size=None, proxy=None) as socket:
            yield Page(socket)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


@pytest.fixture
def page(database: Prepared, ledger: Ledger, api_settings: Settings, tmp_path: Path) -> Iterator[Page]:
    ledger.load({
        "entities": [{"num": 1001, "type": "TOKEN"}],  # the path example of /api/v1/tokens/{tokenId}
        "tokens": [{"token_id": "0.0.1001", "symbol": "FIRST", "created_timestamp": "1"}],
    })  # fmt: skip
    app = create_app(api_settings, database.api_url)
    with serve(app) as base:
        yield from _chromium(f"{base}/api/v1/docs", tmp_path)


_TAG_NAMES = "[...document.querySelectorAll('.opblock-tag')].map(e => e.getAttribute('data-tag'))"
_OPERATION = (
    "[...document.querySelectorAll('.opblock')].find(e => e.querySelector('.opblock-summary-path')"
    "?.getAttribute('data-path') === '/api/v1/tokens/{tokenId}')"
)


def test_a_person_tries_a_route(page: Page) -> None:
    page.wait_for("document.querySelectorAll('.opblock-tag').length > 0")
    shown = page.evaluate(_TAG_NAMES)
    reference_order = [name for name, _ in TAGS]
    assert shown == [name for name in reference_order if name in shown]
    assert shown[0] == "accounts" and "tokens" in shown and "network" in shown
    page.wait_for(f"!!({_OPERATION})")
    page.evaluate(f"({_OPERATION}).querySelector('.opblock-summary-control').click()")
    page.wait_for(f"!!({_OPERATION}).querySelector('.try-out__btn')")
    page.evaluate(f"({_OPERATION}).querySelector('.try-out__btn').click()")
    page.wait_for(f"!!({_OPERATION}).querySelector('.execute')")
    page.evaluate(f"({_OPERATION}).querySelector('.execute').click()")
    status = page.wait_for(
        f"({_OPERATION}).querySelector('.live-responses-table tbody .response-col_status')?.innerText",
        shown=f"({_OPERATION}).innerText",
    )
    assert status.strip() == "200"
    shown_url = page.evaluate(f"({_OPERATION}).querySelector('.request-url pre')?.innerText")
    assert "/api/v1/tokens/0.0.1001?timestamp=lte" in shown_url, shown_url
    body = page.evaluate(
        f"({_OPERATION}).querySelector('.live-responses-table tbody .response-col_description pre')?.innerText"
    )
    answer = json.loads(body)
    assert answer["token_id"] == "0.0.1001" and answer["symbol"] == "FIRST"
