"""The public HTML page at ``/``, rendered on the server from the same :class:`render.View` as the JSON.

Readable without JavaScript and without external assets (one inline stylesheet): ``lang``, landmarks
(``header``, ``main``, ``footer``), one ``h1`` and ``h2`` per section, every colour paired with words, and
colours chosen for at least 4.5:1 contrast with their text. Every value from the database is escaped.

Text an operator typed (names, descriptions, update bodies) is isolated in ``<bdi>`` (or a block with
``dir="auto"``), so a right-to-left name or a bidirectional override inside it cannot reorder the page text
around it; in attributes and ``<title>``, where no isolation exists, the bidi controls are dropped. Long words
wrap (``overflow-wrap: anywhere``) instead of widening the page.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from ledgermirror.db.evidence import Signing
from ledgermirror.status import maintenance, uptime
from ledgermirror.status.model import OPERATIONAL, UNRESOLVED_INCIDENT_STATES
from ledgermirror.status.render import View
from ledgermirror.status.wire import parse_timestamp

COMPONENT_WORDS = {
    "operational": "Operational",
    "degraded_performance": "Degraded performance",
    "partial_outage": "Partial outage",
    "major_outage": "Major outage",
    "under_maintenance": "Under maintenance",
}
STATE_WORDS = {
    "investigating": "Investigating",
    "identified": "Identified",
    "monitoring": "Monitoring",
    "resolved": "Resolved",
    "postmortem": "Postmortem",
    "scheduled": "Scheduled",
    "in_progress": "In progress",
    "verifying": "Verifying",
    "completed": "Completed",
}
IMPACT_WORDS = {"none": "No impact", "minor": "Minor", "major": "Major", "critical": "Critical"}
IMPACT_WORDS["maintenance"] = "Maintenance"

CSS = """
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;
background:#fff;line-height:1.45}
body{margin:0 auto;max-width:56rem;padding:1rem;overflow-wrap:anywhere}
.row>*,.group>h3>*{min-width:0}
h1{font-size:1.6rem;margin:.5rem 0 1rem}h2{font-size:1.25rem;margin:2rem 0 .75rem;border-bottom:1px solid #767676}
h3{font-size:1.05rem;margin:1rem 0 .25rem}
.banner{padding:1rem;border-radius:.4rem;font-size:1.2rem;font-weight:600;color:#fff;background:#1e6b34}
.ind-minor{background:#f2c94c;color:#1a1a1a}.ind-major{background:#a84a00}.ind-critical{background:#a4161a}
.ind-maintenance{background:#1f4e8c}
ul.plain{list-style:none;padding:0;margin:0}
.component{padding:.6rem 0;border-bottom:1px solid #d0d0d0}
.row{display:flex;justify-content:space-between;gap:1rem;flex-wrap:wrap}
.st{font-weight:600}.st-operational{color:#1e6b34}.st-degraded_performance{color:#7a5a00}
.st-partial_outage{color:#a84a00}.st-major_outage{color:#a4161a}.st-under_maintenance{color:#1f4e8c}
.bars{display:flex;gap:1px;height:2rem;margin:.35rem 0}.bars span{flex:1;border-radius:1px}
.b-operational,.b-degraded_performance,.b-under_maintenance{background:#2e8b4a}
.b-partial_outage{background:#d9822b}.b-major_outage{background:#c0392b}.b-none{background:#bdbdbd}
.b-degraded_performance{background:#c9a227}
.legend{display:flex;justify-content:space-between;font-size:.85rem;color:#4a4a4a}
.group>h3{display:flex;justify-content:space-between}.group ul{padding-left:1rem}
article{border:1px solid #d0d0d0;border-radius:.4rem;padding:.5rem 1rem;margin:.75rem 0}
article h3{margin-top:.25rem}.meta{color:#4a4a4a;font-size:.9rem;margin:0}
ol.timeline{list-style:none;padding:0}ol.timeline li{margin:.5rem 0}
.desc{color:#4a4a4a;font-size:.9rem;margin:.1rem 0;white-space:pre-line}
a{color:#0b57a4}footer{margin:2rem 0;font-size:.9rem;color:#4a4a4a}
.auto{color:#4a4a4a;font-size:.9rem;margin:.1rem 0;font-style:italic}
.scroll{overflow-x:auto}table.signing{border-collapse:collapse;font-size:.85rem}
table.signing th,table.signing td{border:1px solid #d0d0d0;padding:.2rem .4rem;text-align:left}
.sg-ok{background:#e3f1e6;color:#1a1a1a}.sg-some{background:#fbf1cf;color:#1a1a1a}
.sg-bad{background:#f8dcd8;color:#1a1a1a}.sg-none{color:#4a4a4a}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
"""


BIDI_CONTROLS = dict.fromkeys(map(ord, "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
"""Marks, embeddings, overrides and isolates: dropped where text cannot be isolated (attributes, ``<title>``)."""


def user(value: object) -> str:
    """Operator-typed text inside running text: escaped and bidi-isolated."""
    return f"<bdi>{escape(str(value))}</bdi>"


def plain(value: object) -> str:
    """Operator-typed text for an attribute or ``<title>``: escaped, bidi controls dropped."""
    return escape(str(value).translate(BIDI_CONTROLS))


def when(text: str | None, zone: str) -> str:
    """A ``<time>`` element showing a wire timestamp in the page's zone."""
    if text is None:
        return ""
    local = parse_timestamp(text).astimezone(ZoneInfo(zone))
    shown = local.strftime("%b %d, %Y %H:%M ") + (local.tzname() or zone)
    return f'<time datetime="{escape(text)}">{escape(shown)}</time>'


def percent(value: float | None) -> str:
    if value is None:
        return "no data"
    return f"{value * 100:.2f}".rstrip("0").rstrip(".") + " %"


def bars(name: str, days: Sequence[uptime.Day]) -> str:
    """A row of day bars: an image with a text summary for assistive technology, a title per day."""
    if not days:
        return ""
    total = percent(uptime.overall(days))
    bad = [
        day for day in days if day.worst not in (None, OPERATIONAL, "degraded_performance", "under_maintenance")
    ]
    summary = f"{len(days)}-day uptime of {name.translate(BIDI_CONTROLS)}: {total}"
    summary += (
        "; days with outages: "
        + ", ".join(
            f"{day.date.isoformat()} ({COMPONENT_WORDS[day.worst or OPERATIONAL].lower()}, {percent(day.uptime)})"
            for day in bad
        )
        if bad
        else "; no outages"
    )
    cells = []
    for day in days:
        words = (
            "no data" if day.worst is None else f"{percent(day.uptime)} up, worst: {COMPONENT_WORDS[day.worst]}"
        )
        label = f"{day.date.isoformat()}: {words}"
        cells.append(f'<span class="b-{escape(day.worst or "none")}" title="{escape(label)}"></span>')
    return (
        f'<div class="bars" role="img" aria-label="{escape(summary)}">{"".join(cells)}</div>'
        f'<div class="legend" aria-hidden="true"><span>{len(days)} days ago</span>'
        f"<span>{escape(total)} uptime</span><span>Today</span></div>"
    )


def _status(value: str) -> str:
    return f'<span class="st st-{escape(value)}">{escape(COMPONENT_WORDS.get(value, value))}</span>'


@dataclass(frozen=True, slots=True)
class SigningView:
    """The consensus nodes' signing per hour: ``nodes`` (name, node id) in page order, ``slots`` the start of
    each hour (oldest first), ``counts`` by (node id, slot index)."""

    nodes: list[tuple[str, int]]
    slots: list[dt.datetime]
    counts: Mapping[tuple[int, int], Signing]


EMPTY_SIGNING = SigningView([], [], {})


def _component(
    item: Mapping[str, Any], days: Mapping[str, Sequence[uptime.Day]], automatic: Mapping[str, str | None]
) -> str:
    name = str(item["name"])
    parts = [f'<li class="component"><div class="row">{user(name)}{_status(item["status"])}</div>']
    if item["description"]:
        parts.append(f'<p class="desc" dir="auto">{escape(item["description"])}</p>')
    if item["id"] in automatic:
        reason = automatic[item["id"]]
        words = f"Automatic status: {reason}" if reason else "Automatic status: no problem found in the evidence"
        parts.append(f'<p class="auto" dir="auto">{escape(words)}</p>')
    if item["showcase"]:
        parts.append(bars(name, days.get(item["id"], [])))
    parts.append("</li>")
    return "".join(parts)


def _visible(item: Mapping[str, Any]) -> bool:
    return not (item["only_show_if_degraded"] and item["status"] == OPERATIONAL)


def components_section(
    view: View, days: Mapping[str, Sequence[uptime.Day]], automatic: Mapping[str, str | None] | None = None
) -> str:
    automatic = automatic or {}
    by_id = {item["id"]: item for item in view.components}
    parts = ['<section aria-labelledby="h-components"><h2 id="h-components">Components</h2><ul class="plain">']
    shown = 0
    for item in view.components:
        if item["group_id"] is not None or not _visible(item):
            continue
        shown += 1
        if not item["group"]:
            parts.append(_component(item, days, automatic))
            continue
        kids = [by_id[kid] for kid in item["components"] if kid in by_id and _visible(by_id[kid])]
        parts.append(
            f'<li class="group"><h3>{user(item["name"])}{_status(item["status"])}</h3>'
            f'<ul class="plain">{"".join(_component(kid, days, automatic) for kid in kids)}</ul></li>'
        )
    parts.append("</ul>")
    if not shown:
        parts.append("<p>No components are listed yet.</p>")
    parts.append("</section>")
    return "".join(parts)


def _signing_cell(count: Signing | None) -> str:
    if count is None:
        return '<td class="sg-none">no files</td>'
    total = count.valid + count.failed + count.missing
    words = f"{count.valid}/{total}"
    if count.failed:
        words += f", {count.failed} failed"
    kind = "ok" if count.valid == total else "bad" if count.failed or count.valid == 0 else "some"
    title = f"{count.valid} of {total} files signed, {count.failed} failing, {count.missing} missing"
    return f'<td class="sg-{kind}" title="{escape(title)}">{escape(words)}</td>'


def signing_section(signing: SigningView, zone: str) -> str:
    """A table of the nodes' valid signatures per hour (files signed / files), failures named."""
    if not signing.nodes:
        return ""
    hours = "".join(f'<th scope="col">{escape(uptime_hour(start, zone))}</th>' for start in signing.slots)
    rows = []
    for name, node_id in signing.nodes:
        cells = "".join(_signing_cell(signing.counts.get((node_id, index))) for index in range(len(signing.slots)))
        rows.append(f'<tr><th scope="row">{user(name)}</th>{cells}</tr>')
    return (
        '<section aria-labelledby="h-signing"><h2 id="h-signing">Consensus node signatures</h2>'
        f'<div class="scroll"><table class="signing"><caption>Files each node signed validly, per hour, over the '
        f"last {len(signing.slots)} hours (from the signature files the mirror verified)</caption>"
        f'<thead><tr><th scope="col">Node</th>{hours}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
        "</section>"
    )


def uptime_hour(start: dt.datetime, zone: str) -> str:
    return start.astimezone(ZoneInfo(zone)).strftime("%H:%M")


def _timeline(item: Mapping[str, Any], zone: str) -> str:
    rows = []
    for update in item["incident_updates"]:
        rows.append(
            f"<li><strong>{escape(STATE_WORDS.get(update['status'], update['status']))}</strong> — "
            f'<span class="body" dir="auto">{escape(update["body"])}</span><br>'
            f'<span class="meta">{when(update["display_at"], zone)}</span></li>'
        )
    return f'<ol class="timeline" aria-label="Updates, newest first">{"".join(rows)}</ol>'


def _article(item: Mapping[str, Any], zone: str, *, level: int = 3) -> str:
    names = ", ".join(user(component["name"]) for component in item["components"])
    meta = [escape(f"Status: {STATE_WORDS.get(item['status'], item['status'])}")]
    meta.append(escape(f"Impact: {IMPACT_WORDS.get(item['impact'], item['impact'])}"))
    if names:
        meta.append(f"Affects: {names}")
    window = ""
    if "scheduled_for" in item:
        window = (
            f'<p class="meta">Scheduled for {when(item["scheduled_for"], zone)} until '
            f"{when(item['scheduled_until'], zone)}</p>"
        )
    return (
        f'<article id="i-{escape(item["id"])}"><h{level} dir="auto">{escape(item["name"])}</h{level}>'
        f'<p class="meta">{" · ".join(meta)}</p>{window}{_timeline(item, zone)}</article>'
    )


def _list_section(anchor: str, title: str, items: Sequence[Mapping[str, Any]], zone: str, empty: str) -> str:
    body = "".join(_article(item, zone) for item in items) or f"<p>{escape(empty)}</p>"
    return f'<section aria-labelledby="h-{anchor}"><h2 id="h-{anchor}">{escape(title)}</h2>{body}</section>'


def render_page(
    view: View,
    days: Mapping[str, Sequence[uptime.Day]],
    feed_base: str = "",
    *,
    automatic: Mapping[str, str | None] | None = None,
    signing: SigningView = EMPTY_SIGNING,
) -> str:
    """The whole page as text. ``days``: component id -> its uptime days (groups need none); ``automatic``:
    component id -> the reason of its automatic status; ``signing``: the nodes' signing per hour."""
    zone = view.page["time_zone"]
    name = str(view.page["name"])
    indicator = view.status["indicator"]
    unresolved = [item for item in view.incidents if item["status"] in UNRESOLVED_INCIDENT_STATES]
    past = [item for item in view.incidents if item["status"] not in UNRESOLVED_INCIDENT_STATES]
    active = [item for item in view.maintenances if maintenance.is_active(item["status"])]
    upcoming = [item for item in view.maintenances if maintenance.is_upcoming(item["status"])]
    upcoming.sort(key=lambda item: item["scheduled_for"])
    sections = [
        f'<section aria-labelledby="h-overall"><h2 id="h-overall" class="vh">Current status</h2>'
        f'<p class="banner ind-{escape(indicator)}" role="status">{escape(view.status["description"])}</p>'
        "</section>",
        _list_section("incidents", "Active incidents", unresolved, zone, "No active incidents."),
        _list_section("active", "Maintenance in progress", active, zone, "No maintenance in progress."),
        _list_section("upcoming", "Upcoming maintenance", upcoming, zone, "No maintenance scheduled."),
        components_section(view, days, automatic),
        signing_section(signing, zone),
        _list_section("past", "Past incidents", past, zone, "No incidents reported."),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{plain(name)} status</title>"
        f'<link rel="alternate" type="application/atom+xml" title="{plain(name)} history (Atom)" '
        f'href="{escape(feed_base)}/history.atom">'
        f'<link rel="alternate" type="application/rss+xml" title="{plain(name)} history (RSS)" '
        f'href="{escape(feed_base)}/history.rss">'
        f"<style>{CSS}</style></head><body>"
        f"<header><h1>{user(name)} status</h1></header>"
        f'<main id="main">{"".join(sections)}</main>'
        f"<footer><p>Last updated {when(view.page['updated_at'], zone)}. Times are shown in "
        f"{escape(zone)}. Feeds: "
        f'<a href="{escape(feed_base)}/history.atom">Atom</a>, <a href="{escape(feed_base)}/history.rss">RSS</a>. '
        'API: <a href="/api/v2/summary.json">summary.json</a>.</p></footer></body></html>\n'
    )
