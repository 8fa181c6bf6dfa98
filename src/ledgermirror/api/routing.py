"""The route table's order and dispatch: :func:`literal_first` and :class:`IndexedRouter`.

Starlette's router tries its routes one by one, a regular expression each, until one matches: with fifty-odd
routes, ``/api/v1/accounts/{id}/allowances/crypto`` was tried against 38 of them on every request (tens of
microseconds, a tenth of a light request's CPU). :class:`IndexedRouter` groups the routes by the first
segments of their path, which are literal in every route (``/api/v1/accounts``, ``/health``, ``/metrics``), and
tries only the group a request's path falls in, in the table's order. A path outside every group, or one that
no route of its group answers, gets Starlette's own full search (so 404s, 405s and anything unforeseen behave
exactly as before).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.types import Receive, Scope, Send

from ledgermirror.api.endpoint import Endpoint

KEY_SEGMENTS = 3
"""How many leading path segments name a group (``api``, ``v1``, ``accounts``)."""


def literal_first(endpoints: Sequence[Endpoint]) -> list[Endpoint]:
    """The endpoints in the order the router tries them: where two paths could match one URL, the one with a
    literal segment where the other has a parameter comes first (``/contracts/results`` before
    ``/contracts/{contractIdOrAddress}``, ``/contracts/results/logs`` before ``/contracts/results/{id}``), as the
    reference's routers ensure with their order and guards. Otherwise the declared order is kept."""
    return sorted(endpoints, key=lambda endpoint: [part.startswith("{") for part in endpoint.path.split("/")])


def group_key(path: str) -> tuple[str, ...]:
    """The group of a request path or of a route's path: its first :data:`KEY_SEGMENTS` segments."""
    return tuple(path.split("/", KEY_SEGMENTS + 1)[1 : KEY_SEGMENTS + 1])


def route_groups(routes: Sequence[BaseRoute]) -> dict[tuple[str, ...], tuple[BaseRoute, ...]] | None:
    """Routes by group, each group in the table's order; None when some route's group is not all literal (then
    only the full search is right)."""
    groups: dict[tuple[str, ...], list[BaseRoute]] = {}
    for route in routes:
        path = route.path if isinstance(route, (Route, Mount)) else None
        if path is None:
            return None
        key = group_key(path)
        if any("{" in segment for segment in key):
            return None
        groups.setdefault(key, []).append(route)
    return {key: tuple(members) for key, members in groups.items()}


class IndexedRouter(Router):
    """Starlette's router, trying only the routes of the request path's group."""

    def __init__(self, routes: Sequence[BaseRoute], **options: Any) -> None:
        super().__init__(routes, **options)
        self.groups = route_groups(self.routes)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        groups = self.groups
        candidates = (
            groups.get(group_key(scope["path"])) if groups is not None and scope["type"] == "http" else None
        )
        if candidates is not None:
            scope.setdefault("router", self)
            for route in candidates:
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    scope["route"] = route
                    scope.update(child_scope)
                    await route.handle(scope, receive, send)
                    return
        await super().app(scope, receive, send)  # no full match in the group: Starlette's own search
