"""Routes of the HTML page (``/``) and the feeds (``/history.atom``, ``/history.rss``).

They render the same :class:`render.View` the JSON uses, read in one repeatable-read transaction together
with the uptime history, and answer with the JSON routes' HTTP behaviour (HEAD, ETag/304, CORS, short cache,
bodies kept in the same in-memory cache, which every management write clears).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.status import feeds, http, render, uptime
from ledgermirror.status.db import ACQUIRE_SECONDS
from ledgermirror.status.page_html import render_page
from ledgermirror.status.state import StatusState
from ledgermirror.status.store import read_snapshot
from ledgermirror.status.wire import from_ns

HTML_TYPE = "text/html; charset=utf-8"


async def read_page(state: StatusState, *, with_uptime: bool) -> tuple[render.View, dict[str, list[uptime.Day]]]:
    """The view and (optionally) every leaf component's uptime days, from one consistent read."""
    now = from_ns(state.clock.now_ns())
    zone = state.settings.time_zone
    since = uptime.day_bounds(now, zone)[0][1]
    pool = state.read_pool()
    async with (
        pool.connection(ACQUIRE_SECONDS) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        snapshot = await read_snapshot(conn)
        history = await uptime.read_history(conn, since) if with_uptime else {}
    view = render.build(snapshot, now, state.settings)
    days: dict[str, list[uptime.Day]] = {}
    if with_uptime:
        for row in snapshot.components:
            if not row["is_group"]:
                changes = history.get(row["id"]) or uptime.fallback(row["created_at"], row["status"])
                days[row["id"]] = uptime.daily_uptime(changes, now, zone)
    return view, days


async def _page(state: StatusState) -> bytes:
    view, days = await read_page(state, with_uptime=True)
    return render_page(view, days).encode()


async def _atom(state: StatusState) -> bytes:
    view, _ = await read_page(state, with_uptime=False)
    return feeds.atom(view, state.settings.public_url.rstrip("/") + "/history.atom")


async def _rss(state: StatusState) -> bytes:
    view, _ = await read_page(state, with_uptime=False)
    return feeds.rss(view, state.settings.public_url.rstrip("/") + "/history.rss")


def _route(path: str, media_type: str, make: Callable[[StatusState], Awaitable[bytes]]) -> Route:
    key = "page:" + path

    async def handle(request: Request) -> Response:
        if request.method == "OPTIONS":
            return http.preflight()
        state: StatusState = request.app.state.status
        body = state.cache.get(key)
        if body is None:
            body = await make(state)
            state.cache.put(key, body)
        return http.json_response(request, body, state.settings.cache_seconds, media_type)

    return Route(path, handle, methods=["GET", "HEAD", "OPTIONS"], name=f"status:{path}")


ROUTES = [
    _route("/", HTML_TYPE, _page),
    _route("/history.atom", feeds.ATOM_TYPE, _atom),
    _route("/history.rss", feeds.RSS_TYPE, _rss),
]
