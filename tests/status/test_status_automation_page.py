"""The page shows the evidence: a simulated network with a node that stops signing and one signing with a wrong
key, imported by the real importer and evaluated with automatic incidents on; the page (in headless Chromium
too), the feeds and the JSON show the automatic statuses with their reasons and the nodes' signing per hour."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.status.harness import SetClock, Status
from tests.status.live import serve
from tests.status.scenarios import Network, misbehaving_network
from tests.status.test_status_chromium import CHROMIUM, VisibleText, chromium

from ledgermirror.runtime import Prepared
from ledgermirror.status.app import create_status_app
from ledgermirror.status.automation import Automation
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.rules import Rules
from ledgermirror.status.wire import from_ns

pytestmark = pytest.mark.usefixtures("ledger")
SETTINGS = StatusSettings(page_url="https://status.example.org", cache_seconds=0)


@pytest.fixture
def network(tmp_path: Path) -> Network:
    return misbehaving_network(tmp_path / "network")


@pytest.fixture
def evaluated(clean: Prepared, network: Network) -> Iterator[Status]:
    network.import_up_to(clean.owner_url, len(network.names) - 1)
    clock = SetClock(from_ns(network.instant(len(network.names) - 1) + 5_000_000_000))
    app = create_status_app(SETTINGS, clean.api_url, clean.owner_url, clock)
    with TestClient(app, raise_server_exceptions=False) as client:
        status = Status(client, clock, clean.owner_url)
        automation = Automation(Rules(), incidents=True)
        status.run(lambda conn: automation.evaluate(conn, clock.now))
        yield status


EXPECTED = (
    "Node 1 (0.0.4) Major outage",
    "Automatic status: node 0.0.4: missed 14 of the last 30 files (14 in a row)",
    "Node 2 (0.0.5) Partial outage",
    "Automatic status: node 0.0.5: signature failed verification on 4 of the last 30 files",
    "Node 0 (0.0.3) Operational simulated node 0 (revision 1) Automatic status: no problem found in the evidence",
    "Consensus node signatures",
    # the last six hours, one column each: every file falls in the last hour
    "Node 0 (0.0.3) " + "no files " * 5 + "30/30",
    "Node 1 (0.0.4) " + "no files " * 5 + "16/30",
    "Node 2 (0.0.5) " + "no files " * 5 + "26/30, 4 failed",
)


def _text(page: str) -> str:
    parser = VisibleText()
    parser.feed(page)
    return " ".join(parser.parts)


def test_the_page_and_feeds_show_the_automatic_statuses_and_their_evidence(evaluated: Status) -> None:
    text = _text(evaluated.client.get("/").text)
    for expected in EXPECTED:
        assert expected in text, expected
    assert "Node 1 (0.0.4): major outage" in text  # the automatic incident
    atom = evaluated.client.get("/history.atom").text
    assert "Node 1 (0.0.4): major outage" in atom and "missed 14 of the last 30 files" in atom
    summary = evaluated.get("summary.json")
    assert summary["status"]["indicator"] == "critical"
    assert {item["name"] for item in summary["incidents"]} == {
        "Node 1 (0.0.4): major outage",
        "Node 2 (0.0.5): partial outage",
    }


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_person_sees_the_evidence_in_a_browser(evaluated: Status, clean: Prepared, tmp_path: Path) -> None:
    app = create_status_app(SETTINGS, clean.api_url, clean.owner_url, evaluated.clock)
    with serve(app) as base:
        dumped = chromium(tmp_path, "--dump-dom", base + "/")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    text = _text(dumped.stdout)
    for expected in EXPECTED:
        assert expected in text, expected
    # 360 px wide, the signing table scrolls inside its box: the page itself never scrolls sideways
    probe = (
        "<script>document.body.setAttribute('data-overflow', String(document.documentElement.scrollWidth"
        " - document.documentElement.clientWidth));</script></body>"
    )
    page = tmp_path / "page.html"
    page.write_text(evaluated.client.get("/").text.replace("</body>", probe), encoding="utf-8")
    narrow = chromium(tmp_path, "--window-size=360,800", "--dump-dom", page.as_uri())
    assert narrow.returncode == 0, narrow.stderr[-2000:]
    overflow = re.search(r'<body data-overflow="(-?\d+)"', narrow.stdout)
    assert overflow is not None and int(overflow.group(1)) == 0
