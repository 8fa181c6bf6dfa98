"""The route table's order and dispatch: :func:`literal_first` and :class:`IndexedRouter`.

Starlette's router tries its routes one by one, a regular expression each, until one matches: with fifty-odd
routes, ``/api/v1/accounts/{id}/allowances/crypto`` was tried against 38 of them on every request (tens of
microseconds, a tenth of a light request's CPU). :class:`IndexedRouter` groups the routes by the first
segments of their path, which are literal in every route (``/api/v1/accounts``, ``/health``, ``/metrics``), and
tries only the group a request's path falls in, in the table's order. A path outside every group, or one that
no route of its group answers, gets Starlette's own full search (so 404s, 405s and anything unforeseen behave
exactly as before).

:class:`DirectDispatch` goes further for the JSON ``GET`` endpoints, which are nearly every request: it finds
the route by the path's group, its number of segments and its last segment (:class:`PathIndex`: one regular
expression tried, where the group's routes were tried in turn), and calls the endpoint as a plain ASGI app
(``Endpoint.serve_direct``), past Starlette's exception middleware, router and request-response wrappers, which
have nothing to do for them: ``Endpoint`` turns every error into a response itself. Anything else (another
method, a path no endpoint answers, the docs, health and metrics routes) goes the way it always went.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.convertors import PathConvertor
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

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


_DIRECT_METHODS = frozenset({"GET", "HEAD"})


class PathIndex:
    """Routes by group, number of segments and last segment, each list in the table's order.

    A route whose path has ``n`` segments can only match a path of ``n`` segments (a parameter matches one
    segment: no route here takes a ``:path`` parameter, and a group holding a ``Mount`` or such a route is
    left out), and one whose last segment is literal only a path ending in it. So the first route of
    :meth:`candidates` whose expression matches is the first route of the whole table that matches."""

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        shapes: dict[tuple[tuple[str, ...], int], list[tuple[Route, str | None]]] = {}
        excluded: set[tuple[str, ...]] = set()
        for route in routes:
            path = route.path if isinstance(route, (Route, Mount)) else None
            if path is None:
                continue
            key = group_key(path)
            if (
                not isinstance(route, Route)
                or any(isinstance(convertor, PathConvertor) for convertor in route.param_convertors.values())
                or any("{" in segment for segment in key)
            ):
                excluded.add(key)
                continue
            segments = path.split("/")
            last = segments[-1]
            shapes.setdefault((key, len(segments)), []).append((route, None if "{" in last else last))
        self._table: dict[tuple[tuple[str, ...], int], tuple[dict[str, tuple[Route, ...]], tuple[Route, ...]]] = {}
        for (key, count), members in shapes.items():
            if key in excluded:
                continue
            literals = {last for _, last in members if last is not None}
            by_last = {
                literal: tuple(route for route, last in members if last is None or last == literal)
                for literal in literals
            }
            self._table[(key, count)] = (by_last, tuple(route for route, last in members if last is None))

    def first_match(self, path: str) -> tuple[Route, dict[str, Any]] | None:
        """The table's first route whose expression matches ``path`` and its path parameters; None when none
        does or the path's group is not indexed."""
        segments = path.split("/")
        entry = self._table.get((tuple(segments[1 : KEY_SEGMENTS + 1]), len(segments)))
        if entry is None:
            return None
        by_last, parametric = entry
        for route in by_last.get(segments[-1], parametric):
            match = route.path_regex.match(path)
            if match is not None:
                convertors = route.param_convertors
                return route, {name: convertors[name].convert(value) for name, value in match.groupdict().items()}
        return None


class DirectDispatch:
    """ASGI middleware, the innermost: a ``GET`` or ``HEAD`` whose route is one of ``direct`` (each with the
    endpoint as an ASGI app) is served by it at once; everything else goes on to ``app`` (Starlette's
    exception middleware and router)."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute], direct: Sequence[tuple[Route, ASGIApp]]) -> None:
        self.app = app
        self.index = PathIndex(routes)
        self.direct = {id(route): serve for route, serve in direct}  # a Route compares by value, unhashable

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in _DIRECT_METHODS and not scope.get("root_path"):
            found = self.index.first_match(scope["path"])
            if found is not None:
                route, params = found
                serve = self.direct.get(id(route))
                if serve is not None:
                    scope["route"] = route
                    scope["endpoint"] = route.endpoint
                    scope["path_params"] = params
                    await serve(scope, receive, send)
                    return
        await self.app(scope, receive, send)
