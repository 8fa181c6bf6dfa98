"""The Atom and RSS feeds: well-formed XML (stdlib parser), an entry per incident/maintenance, escaping."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from email.utils import parsedate_to_datetime

from tests.status.harness import Status
from tests.status.test_public import busy

A = "{http://www.w3.org/2005/Atom}"


def atom(status: Status) -> ET.Element:
    response = status.client.get("/history.atom")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/atom+xml")
    return ET.fromstring(response.content)


def rss(status: Status) -> ET.Element:
    response = status.client.get("/history.rss")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/rss+xml")
    return ET.fromstring(response.content)


def test_empty_feeds(status: Status) -> None:
    feed = atom(status)
    assert feed.tag == f"{A}feed"
    for child in ("id", "title", "updated"):
        assert feed.find(f"{A}{child}") is not None
    assert feed.find(f"{A}entry") is None
    channel = rss(status).find("channel")
    assert channel is not None and channel.find("item") is None
    assert channel.findtext("link") == "https://status.example.org/"


def test_busy_feeds_list_every_incident_and_maintenance(status: Status) -> None:
    made = busy(status)
    incidents = status.get("incidents.json")["incidents"]
    maintenances = status.get("scheduled-maintenances.json")["scheduled_maintenances"]
    expected = {item["id"]: item for item in incidents + maintenances}
    entries = atom(status).findall(f"{A}entry")
    assert len(entries) == len(expected) == 10
    seen = {}
    for entry in entries:
        ident = (entry.findtext(f"{A}id") or "").rsplit(":", 1)[1]
        seen[ident] = entry
        item = expected[ident]
        assert (entry.findtext(f"{A}title") or "").startswith(item["name"])
        link = entry.find(f"{A}link")
        assert link is not None and link.get("href") == item["shortlink"]
        assert entry.findtext(f"{A}updated") == item["updated_at"]
        content = entry.find(f"{A}content")
        assert content is not None and content.get("type") == "html"
    assert set(seen) == set(expected)
    assert "What happened." in (seen[made["postmortem"]].findtext(f"{A}content") or "")
    assert "Maintenance, In progress" in (seen[made["in_progress"]].findtext(f"{A}title") or "")
    updated = [entry.findtext(f"{A}updated") or "" for entry in entries]
    assert updated == sorted(updated, reverse=True)
    items = rss(status).findall("channel/item")
    assert len(items) == 10
    for element in items:
        guid = element.findtext("guid") or ""
        item = expected[guid.rsplit(":", 1)[1]]
        assert element.findtext("link") == item["shortlink"]
        assert parsedate_to_datetime(element.findtext("pubDate") or "").tzinfo is not None
        assert (element.findtext("title") or "").startswith(item["name"])


def test_feeds_escape_everything(status: Status) -> None:
    key = status.new_key()
    evil = "<b>&\"'</b> ]]> \x01bell"
    status.write("POST", "incidents", {"name": evil, "body": evil}, key)
    entry = atom(status).find(f"{A}entry")
    assert entry is not None
    assert entry.findtext(f"{A}title", "").startswith("<b>&\"'</b> ]]> bell")
    assert "&lt;b&gt;&amp;" in (entry.findtext(f"{A}content") or "")  # html content: escaped once more
    item = rss(status).find("channel/item")
    assert item is not None and (item.findtext("title") or "").startswith("<b>&")


def test_feed_http_behaviour(status: Status) -> None:
    for path in ("/history.atom", "/history.rss"):
        first = status.client.get(path)
        assert status.client.get(path, headers={"if-none-match": first.headers["etag"]}).status_code == 304
        head = status.client.head(path)
        assert head.status_code == 200 and head.content == b""
