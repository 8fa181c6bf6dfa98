"""The HTML page at ``/``: content from the same view as the JSON, accessibility basics, escaping, HTTP."""

from __future__ import annotations

import html.parser
from typing import Any

from tests.status.harness import Status
from tests.status.test_public import busy


class Outline(html.parser.HTMLParser):
    """Collects tags, attributes and the visible text of a page (stdlib parser)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.text.append(data.strip())

    def has(self, tag: str, **attrs: str) -> bool:
        return any(name == tag and all(found.get(k) == v for k, v in attrs.items()) for name, found in self.tags)


def outline(body: str) -> Outline:
    parser = Outline()
    parser.feed(body)
    return parser


def test_empty_page_is_accessible_and_self_contained(status: Status) -> None:
    response = status.client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    body = response.text
    page = outline(body)
    assert page.has("html", lang="en")
    for landmark in ("header", "main", "footer"):
        assert page.has(landmark)
    assert sum(1 for tag, _ in page.tags if tag == "h1") == 1
    assert not page.has("script") and '<link rel="stylesheet"' not in body and "src=" not in body
    assert "All Systems Operational" in page.text
    assert "No components are listed yet." in page.text and "No active incidents." in page.text


def test_busy_page_shows_what_the_json_says(status: Status) -> None:
    made = busy(status)
    summary = status.get("summary.json")
    text = " ".join(outline(status.client.get("/").text).text)
    assert summary["status"]["description"] in text
    for component in summary["components"]:
        assert component["name"] in text
    assert "Degraded performance" in text and "Under maintenance" in text
    for name in ("An investigating incident", "An identified incident", "An monitoring incident", "Slow node"):
        assert name in text
    for name in ("Fixed", "Postmortem one"):  # past incidents
        assert name in text
    assert "Upgrade" in text and "Now" in text and "Verify" in text  # upcoming, in progress, verifying
    assert "What happened." in text and "Slow." in text  # timelines
    body = status.client.get("/").text
    assert text.index("Active incidents") < text.index("Slow node") < text.index("Past incidents")
    assert f'id="i-{made["postmortem"]}"' in body
    assert "90-day uptime of Node 0" in body and 'role="img"' in body


def test_uptime_bars_show_an_outage(status: Status) -> None:
    key = status.new_key()
    made = status.write("POST", "components", {"name": "REST API"}, key)["id"]
    status.clock.advance(days=2)
    status.write("PATCH", f"components/{made}", {"status": "major_outage"}, key)
    status.clock.advance(hours=6)
    status.write("PATCH", f"components/{made}", {"status": "operational"}, key)
    status.clock.advance(hours=1)
    body = status.client.get("/").text
    assert "days with outages:" in body and "major outage" in body
    assert body.count('class="b-none"') == 87  # before the component existed: no data, not green
    assert "b-major_outage" in body


def test_everything_is_escaped(status: Status) -> None:
    key = status.new_key()
    evil = '<script>alert("x")</script>&'
    status.write("POST", "components", {"name": evil, "description": evil}, key)
    status.write("POST", "incidents", {"name": evil, "body": evil}, key)
    body = status.client.get("/").text
    assert "<script>" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in body


def test_http_behaviour_matches_the_json(status: Status) -> None:
    first = status.client.get("/")
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "public, max-age=30"
    assert first.headers["access-control-allow-origin"] == "*"
    head = status.client.head("/")
    assert head.status_code == 200 and head.content == b"" and head.headers["etag"] == etag
    assert int(head.headers["content-length"]) == len(first.content)
    again = status.client.get("/", headers={"if-none-match": etag})
    assert again.status_code == 304
    key = status.new_key()
    status.write("POST", "components", {"name": "New"}, key)
    changed: Any = status.client.get("/", headers={"if-none-match": etag})
    assert changed.status_code == 200 and "New" in changed.text
    assert status.client.get("/index.html").status_code == 404
