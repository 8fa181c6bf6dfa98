"""Atom (``/history.atom``) and RSS 2.0 (``/history.rss``) feeds of incidents and maintenances.

Built from the same :class:`render.View` as the JSON and the page, with :mod:`xml.etree.ElementTree` so every
value is escaped; characters XML 1.0 cannot carry are dropped. Entries: the 50 most recent incidents and the 50
most recent maintenances, most recently updated first; each entry's content is its timeline as escaped HTML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from email.utils import format_datetime
from html import escape
from typing import Any

from ledgermirror.status.page_html import STATE_WORDS
from ledgermirror.status.render import View
from ledgermirror.status.wire import parse_timestamp

ATOM_NS = "http://www.w3.org/2005/Atom"
ATOM_TYPE = "application/atom+xml; charset=utf-8"
RSS_TYPE = "application/rss+xml; charset=utf-8"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def clean(text: Any) -> str:
    """Text XML 1.0 can carry (control characters other than tab/newline/CR removed)."""
    return _NOT_XML.sub("", str(text))


def entries(view: View) -> list[Mapping[str, Any]]:
    items: list[Mapping[str, Any]] = [*view.incidents, *view.maintenances]
    items.sort(key=lambda item: (parse_timestamp(item["updated_at"]), item["id"]), reverse=True)
    return items


def summary_html(item: Mapping[str, Any]) -> str:
    """The entry's timeline as HTML (escaped here; the XML layer escapes it once more)."""
    parts = []
    if "scheduled_for" in item:
        parts.append(
            f"<p>Scheduled for {escape(item['scheduled_for'])} until {escape(item['scheduled_until'])}</p>"
        )
    names = ", ".join(str(component["name"]) for component in item["components"])
    if names:
        parts.append(f"<p>Affected components: {escape(names)}</p>")
    for update in item["incident_updates"]:
        state = STATE_WORDS.get(update["status"], update["status"])
        parts.append(
            f"<p><small>{escape(update['display_at'])}</small><br>"
            f"<strong>{escape(state)}</strong> - {escape(update['body'])}</p>"
        )
    return clean("".join(parts))


def _title(item: Mapping[str, Any]) -> str:
    kind = "Maintenance" if "scheduled_for" in item else "Incident"
    return clean(f"{item['name']} ({kind}, {STATE_WORDS.get(item['status'], item['status'])})")


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {key.rstrip("_"): clean(value) for key, value in attrs.items()})
    if text is not None:
        element.text = clean(text)
    return element


def _document(root: ET.Element) -> bytes:
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + body


def atom(view: View, self_url: str) -> bytes:
    page_url = str(view.page["url"]).rstrip("/")
    feed = ET.Element("feed", {"xmlns": ATOM_NS, "xml:lang": "en"})
    _sub(feed, "id", f"tag:ledgermirror,status:{view.page['id']}")
    _sub(feed, "title", f"{view.page['name']} status - incident history")
    _sub(feed, "updated", view.page["updated_at"])
    _sub(feed, "link", href=page_url + "/", rel="alternate", type="text/html")
    _sub(feed, "link", href=self_url, rel="self", type="application/atom+xml")
    author = _sub(feed, "author")
    _sub(author, "name", str(view.page["name"]))
    for item in entries(view):
        entry = _sub(feed, "entry")
        _sub(entry, "id", f"tag:ledgermirror,status:{view.page['id']}:{item['id']}")
        _sub(entry, "title", _title(item))
        _sub(entry, "published", item["created_at"])
        _sub(entry, "updated", item["updated_at"])
        _sub(entry, "link", href=item["shortlink"], rel="alternate", type="text/html")
        _sub(entry, "content", summary_html(item), type="html")
    return _document(feed)


def rss(view: View, self_url: str) -> bytes:
    page_url = str(view.page["url"]).rstrip("/")
    root = ET.Element("rss", {"version": "2.0", "xmlns:atom": ATOM_NS})
    channel = _sub(root, "channel")
    _sub(channel, "title", f"{view.page['name']} status - incident history")
    _sub(channel, "link", page_url + "/")
    _sub(channel, "description", f"Incidents and scheduled maintenances of {view.page['name']}")
    _sub(channel, "language", "en")
    _sub(channel, "lastBuildDate", format_datetime(parse_timestamp(view.page["updated_at"])))
    _sub(channel, "atom:link", href=self_url, rel="self", type="application/rss+xml")
    for item in entries(view):
        entry = _sub(channel, "item")
        _sub(entry, "title", _title(item))
        _sub(entry, "link", item["shortlink"])
        _sub(entry, "guid", f"tag:ledgermirror,status:{view.page['id']}:{item['id']}", isPermaLink="false")
        _sub(entry, "pubDate", format_datetime(parse_timestamp(item["created_at"])))
        _sub(entry, "description", summary_html(item))
    return _document(root)
