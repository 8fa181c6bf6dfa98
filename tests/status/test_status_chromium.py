"""The page as a person sees it: headless Chromium (Debian's ``chromium``) loads ``/`` from 127.0.0.1.

Skipped when ``chromium`` is not installed (``.ci/run`` installs it where apt-get is available).
"""

from __future__ import annotations

import html.parser
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.status.harness import Status
from tests.status.live import local_only_env, serve
from tests.status.test_public import busy

from ledgermirror.runtime import Prepared
from ledgermirror.status.app import create_status_app
from ledgermirror.status.config import StatusSettings

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
]


class VisibleText(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "head"):
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "head"):
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden and data.strip():
            self.parts.append(" ".join(data.split()))


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, env=local_only_env(), check=False)


def test_a_person_sees_the_banner_components_and_incidents(
    status: Status, clean: Prepared, status_settings: StatusSettings, tmp_path: Path
) -> None:
    made = busy(status)
    summary = status.get("summary.json")
    app = create_status_app(status_settings, clean.api_url, clean.owner_url, status.clock)
    with serve(app) as base:
        dumped = chromium(tmp_path, "--dump-dom", base + "/")
        shot = tmp_path / "page.png"
        pictured = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,2600", base + "/")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    parser = VisibleText()
    parser.feed(dumped.stdout)
    text = " ".join(parser.parts)
    assert summary["status"]["description"] in text
    assert text.index(summary["status"]["description"]) < text.index("Components")
    for component in summary["components"]:
        assert component["name"] in text
    assert "Node 1 Degraded performance" in text
    assert "Node 0 Under maintenance" in text
    assert "Consensus network Degraded performance" in text
    for incident in status.get("incidents.json")["incidents"]:
        assert incident["name"] in text
    for title in ("Upgrade", "Now", "Verify"):
        assert title in text
    assert made["group"]
    assert pictured.returncode == 0, pictured.stderr[-2000:]
    assert shot.stat().st_size > 10_000
