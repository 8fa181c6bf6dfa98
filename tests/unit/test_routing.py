"""The indexed router finds, for every route of the table, the route Starlette's full search finds."""

from __future__ import annotations

import re

from starlette.routing import Match, Route

from ledgermirror.api.app import create_app
from ledgermirror.api.routing import IndexedRouter, group_key, route_groups
from ledgermirror.settings import Settings


def _full_search(routes: list[Route], scope: dict[str, object]) -> object | None:
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return route
    return None


def test_every_route_is_found_in_its_group_as_the_full_search_finds_it() -> None:
    router = create_app(Settings(), "postgresql://unused@/unused").router
    assert isinstance(router, IndexedRouter) and router.groups is not None
    checked = 0
    for route in router.routes:
        path = getattr(route, "path", "")
        for method in sorted(getattr(route, "methods", None) or {"GET"}):
            concrete = re.sub(r"{[^}]+}", "0.0.1001", path) + ("/x.js" if path.endswith("/assets") else "")
            scope = {"type": "http", "path": concrete, "method": method, "root_path": ""}
            expected = _full_search(router.routes, scope)  # type: ignore[arg-type]
            group = router.groups[group_key(concrete)]
            assert route in group
            assert _full_search(list(group), scope) is expected, (method, concrete)  # type: ignore[arg-type]
            checked += 1
    assert checked > 50


def test_groups_keep_the_table_order_and_a_parameter_in_a_group_key_disables_the_index() -> None:
    async def endpoint() -> None: ...

    routes = [Route("/api/v1/a", endpoint), Route("/api/v1/b/{x}", endpoint), Route("/api/v1/a/{y}", endpoint)]
    groups = route_groups(routes)
    assert groups == {("api", "v1", "a"): (routes[0], routes[2]), ("api", "v1", "b"): (routes[1],)}
    assert group_key("/health/liveness") == ("health", "liveness")
    assert route_groups([Route("/{anything}/v1/a", endpoint)]) is None
