"""Routes of the HTML page (``/``) and the feeds (``/history.atom``, ``/history.rss``).

They render the same :class:`render.View` the JSON uses, read in one repeatable-read transaction together
with the uptime history, and answer with the JSON routes' HTTP behaviour (HEAD, ETag/304, CORS, short cache,
bodies kept in the same in-memory cache, which every management write clears).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.db import evidence
from ledgermirror.status import feeds, http, render, uptime
from ledgermirror.status.db import ACQUIRE_SECONDS
from ledgermirror.status.page_html import SigningView, render_page
from ledgermirror.status.state import StatusState
from ledgermirror.status.store import read_snapshot
from ledgermirror.status.wire import from_ns

HTML_TYPE = "text/html; charset=utf-8"
HOUR = 3_600_000_000_000
SIGNING_HOURS = 6
"""The per-node signing view covers this many hours, one column each."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the page shows beside the v2 view: why each automatic status is what it is, and the nodes' signing
    over the last :data:`SIGNING_HOURS` hours."""

    automatic: dict[str, str | None]
    """Component id -> the reason in words of its automatic status (None: nothing wrong found)."""
    signing: SigningView


async def read_page(
    state: StatusState, *, with_uptime: bool
) -> tuple[render.View, dict[str, list[uptime.Day]], Evidence]:
    """The view, (optionally) every leaf component's uptime days and the evidence, from one consistent read."""
    now = from_ns(state.clock.now_ns())
    zone = state.settings.time_zone
    since = uptime.day_bounds(now, zone)[0][1]
    start = state.clock.now_ns() - SIGNING_HOURS * HOUR
    pool = state.read_pool()
    async with (
        pool.connection(ACQUIRE_SECONDS) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        snapshot = await read_snapshot(conn)
        history = await uptime.read_history(conn, since) if with_uptime else {}
        counts = await evidence.signing(conn, start, HOUR) if with_uptime else []
    view = render.build(snapshot, now, state.settings)
    automatic = {
        row["id"]: row["auto_reason"]
        for row in snapshot.components
        if str(row["status_source"]).startswith("auto:") and not row["is_group"]
    }
    nodes = [
        (str(row["name"]), int(row["source_ref"][5:]))
        for row in sorted(snapshot.components, key=lambda row: (row["position"], row["id"]))
        if not row["is_group"]
        and str(row["source_ref"] or "").startswith("node:")
        and row["source_ref"][5:].isdigit()
    ]
    slots = [from_ns(start + index * HOUR) for index in range(SIGNING_HOURS)]
    signing = SigningView(nodes, slots, {(count.node_id, count.slot): count for count in counts})
    days: dict[str, list[uptime.Day]] = {}
    if with_uptime:
        for row in snapshot.components:
            if not row["is_group"]:
                changes = history.get(row["id"]) or uptime.fallback(row["created_at"], row["status"])
                days[row["id"]] = uptime.daily_uptime(changes, now, zone)
    return view, days, Evidence(automatic, signing)


async def _page(state: StatusState) -> bytes:
    view, days, found = await read_page(state, with_uptime=True)
    return render_page(view, days, automatic=found.automatic, signing=found.signing).encode()


async def _atom(state: StatusState) -> bytes:
    view, _, _ = await read_page(state, with_uptime=False)
    return feeds.atom(view, state.settings.public_url.rstrip("/") + "/history.atom")


async def _rss(state: StatusState) -> bytes:
    view, _, _ = await read_page(state, with_uptime=False)
    return feeds.rss(view, state.settings.public_url.rstrip("/") + "/history.rss")


def _route(path: str, media_type: str, make: Callable[[StatusState], Awaitable[bytes]]) -> Route:
    key = "page:" + path

    async def handle(request: Request) -> Response:
        if request.method == "OPTIONS":
            return http.preflight()
        state: StatusState = request.app.state.status
        body = state.cache.get(key)
        if body is None:
            generation = state.cache.generation
            body = await make(state)
            state.cache.put(key, body, read_in=generation)
        return http.json_response(request, body, state.settings.cache_seconds, media_type)

    return Route(path, handle, methods=["GET", "HEAD", "OPTIONS"], name=f"status:{path}")


ROUTES = [
    _route("/", HTML_TYPE, _page),
    _route("/history.atom", feeds.ATOM_TYPE, _atom),
    _route("/history.rss", feeds.RSS_TYPE, _rss),
]
