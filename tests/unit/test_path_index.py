"""``api/routing.PathIndex`` finds, for every path, the route Starlette's own search finds first: each route of the
app's table with its parameters filled in (plain values, values that look like another route's literal segment),
and paths no route takes."""

from __future__ import annotations

import itertools

from starlette.routing import Match, Route

from ledgermirror.api.app import create_app
from ledgermirror.api.routing import PathIndex
from ledgermirror.settings import Settings

FILLERS = ("0.0.1001", "results", "logs", "crypto", "1", "0x" + "ab" * 20)
"""Values for a path parameter: an id, and segments some route has as a literal (a parameter takes them too)."""


def _starlette_first(routes: list[Route], path: str) -> Route | None:
    """The first route of the table whose expression matches ``path`` (any method), as Starlette tries them."""
    scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
    for route in routes:
        match, _ = route.matches(scope)
        if match is not Match.NONE:
            return route
    return None


def _paths(route: Route) -> list[str]:
    segments = route.path.split("/")
    choices = [FILLERS if segment.startswith("{") else (segment,) for segment in segments]
    return ["/".join(parts) for parts in itertools.islice(itertools.product(*choices), 40)]


def test_the_index_finds_the_route_starlettes_search_finds() -> None:
    app = create_app(Settings(), "postgresql://nobody@127.0.0.1:1/none")  # no connection until the lifespan
    routes = [route for route in app.router.routes if isinstance(route, Route)]
    index = PathIndex(app.router.routes)
    checked = 0
    for route in routes:
        for path in _paths(route):
            expected = _starlette_first(routes, path)
            found = index.first_match(path)
            if found is not None:  # None: the path's group is not indexed (the docs' Mount), the stack serves it
                assert found[0] is expected, path
                checked += 1
            else:
                assert not route.path.startswith("/api/v1/") or route.path.startswith("/api/v1/docs"), path
    assert checked > 300


def test_paths_no_route_takes_are_not_found() -> None:
    app = create_app(Settings(), "postgresql://nobody@127.0.0.1:1/none")
    index = PathIndex(app.router.routes)
    for path in ("/api/v1/nothing", "/api/v1/accounts/0.0.1/allowances/crypto/more", "/api/v1", "/", "/api/v2/x"):
        assert index.first_match(path) is None, path
    found = index.first_match("/api/v1/accounts/0.0.1001/allowances/crypto")
    assert found is not None
    assert found[0].path == "/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto"
    assert found[1] == {"idOrAliasOrEvmAddress": "0.0.1001"}
