"""Operator text on the HTML page: long names wrap, and bidi controls stay inside their text."""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest
from tests.status.harness import Status
from tests.status.test_status_chromium import CHROMIUM, chromium

RLO = "\u202e"
TRICK = f"Payments {RLO}lanoitarepo"
LONG = "Node" + "W" * 400
ISOLATING = ("bdi",)


class BidiAudit(html.parser.HTMLParser):
    """Every text run holding a bidi control must sit inside an isolating element (``<bdi>`` or ``dir="auto"``);
    no attribute may hold one."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[bool] = []
        self.exposed: list[str] = []
        self.isolated: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and RLO in value:
                self.exposed.append(f"{tag} {name}={value!r}")
        if tag not in ("meta", "link", "br", "img", "input"):
            self.open.append(tag in ISOLATING or dict(attrs).get("dir") == "auto")

    def handle_endtag(self, tag: str) -> None:
        if self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if RLO in data:
            (self.isolated if any(self.open) else self.exposed).append(data)


def _page_with_tricky_text(status: Status) -> str:
    key = status.new_key()
    api = status.write("POST", "components", {"name": TRICK, "description": TRICK}, key)["id"]
    status.write("POST", "components", {"name": LONG, "description": LONG}, key)
    group = status.write("POST", "groups", {"name": TRICK, "components": [api]}, key)["id"]
    assert group
    status.write(
        "POST", "incidents", {"name": TRICK, "body": TRICK + " " + LONG, "components": {api: "major_outage"}}, key
    )
    return str(status.client.get("/").text)


def test_bidi_overrides_are_isolated(status: Status) -> None:
    body = _page_with_tricky_text(status)
    audit = BidiAudit()
    audit.feed(body)
    assert audit.exposed == []
    # component name, its description, group name, incident title, "Affects" and the update body
    assert len(audit.isolated) >= 6
    title = body[body.index("<title>") : body.index("</title>")]
    assert RLO not in title


def test_long_words_may_wrap(status: Status) -> None:
    body = _page_with_tricky_text(status)
    style = body[body.index("<style>") : body.index("</style>")]
    assert "overflow-wrap:anywhere" in style


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_narrow_window_does_not_scroll_sideways(status: Status, tmp_path: Path) -> None:
    """Chromium lays the page out 360 px wide; a script added for the test writes the overflow into the DOM."""
    body = _page_with_tricky_text(status)
    probe = (
        "<script>document.body.setAttribute('data-overflow', String(document.documentElement.scrollWidth"
        " - document.documentElement.clientWidth));</script></body>"
    )
    page = tmp_path / "page.html"
    page.write_text(body.replace("</body>", probe), encoding="utf-8")
    dumped = chromium(tmp_path, "--window-size=360,800", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    overflow = re.search(r'<body data-overflow="(-?\d+)"', dumped.stdout)
    assert overflow is not None, dumped.stdout[-500:]
    assert int(overflow.group(1)) == 0, "pixels the page is wider than the window"
