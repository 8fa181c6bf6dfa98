"""The list pipeline itself (``api/listing.py``), on a list of its own over a real PostgreSQL: the probe (on, and
the reference's "full page" rule), the slice, next links built from the typed filters, empty pages, the order."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.testclient import TestClient

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import ALL_OPS, EQ_ONLY, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.db.pool import Database, api_connections
from ledgermirror.db.sql import Column, Select
from ledgermirror.runtime import Prepared as PreparedDatabase
from ledgermirror.settings import Settings

N = ParamSpec[int]("n", values.integer_between(0), "A number from 1 to 7.", ops=ALL_OPS)
NONE = ParamSpec[str]("none", values.choice("true"), "Answer nothing without a query.", ops=EQ_ONLY)
PARAMS = ParamSet([LIMIT, N, NONE, ORDER])
_N = Column("n")
PATH = "/numbers"


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> str:
    if query.has(NONE):
        raise NothingMatches
    return "context"


def _plan(context: str, query: ParsedQuery, limit: int, order: Order) -> Select:
    select = Select("select n from generate_series(1, 7) as s(n)")
    for item in query.filters(N):
        select.compare(_N, item.op, item.value)
    return select.order_by([_N], order).limit(limit)


def _render(context: str, row: Any) -> dict[str, Any]:
    return {"n": row["n"], "context": context}


def _anchors(context: str, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(N.name, str(row["n"]), number=row["n"])]


SPEC = ListSpec[Request, str](
    path=PATH,
    items="numbers",
    params=PARAMS,
    default_order=Order.DESC,
    locate=query_first,
    prepare=_prepare,
    plan=_plan,
    render_with=_render,
    anchors=_anchors,
    max_age=0,
    summary="Numbers",
    description="1 to 7.",
    item_schema={"type": "object"},
    tag="test",
)


def _app(settings: Settings, dsn: str) -> Starlette:
    ctx = AppContext(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ctx.db = Database(api_connections(dsn, settings))
        try:
            yield
        finally:
            await ctx.db.close()

    app = Starlette(routes=[SPEC.endpoint().route()], lifespan=lifespan)
    app.state.ctx = ctx
    return app


@pytest.fixture(params=[True, False], ids=["probe", "reference"])
def numbers(request: pytest.FixtureRequest, database: PreparedDatabase) -> Iterator[TestClient]:
    settings = dataclasses.replace(Settings(), pagination_probe=request.param)
    with TestClient(_app(settings, database.api_url)) as client:
        yield client


def probing(client: TestClient) -> bool:
    ctx: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    return ctx.settings.pagination_probe


def page(client: TestClient, url: str) -> tuple[list[int], str | None]:
    response = client.get(url)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"numbers", "links"}
    return [item["n"] for item in body["numbers"]], body["links"]["next"]


def test_default_order_and_slice(numbers: TestClient) -> None:
    assert page(numbers, f"{PATH}?limit=3") == ([7, 6, 5], f"{PATH}?limit=3&n=lt:5")
    assert page(numbers, f"{PATH}?limit=3&order=asc") == ([1, 2, 3], f"{PATH}?limit=3&order=asc&n=gt:3")
    response = numbers.get(f"{PATH}?limit=2")
    assert response.headers["link"] == f'<{PATH}?limit=2&n=lt:6>; rel="next"'
    assert response.json()["numbers"][0] == {"n": 7, "context": "context"}


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_following_next_links_gives_every_row_once(numbers: TestClient, order: str) -> None:
    seen: list[int] = []
    url: str | None = f"{PATH}?limit=3&order={order}"
    pages = 0
    while url is not None:
        found, url = page(numbers, url)
        seen.extend(found)
        pages += 1
    assert seen == (list(range(1, 8)) if order == "asc" else list(range(7, 0, -1)))
    assert pages == 3


def test_full_last_page(numbers: TestClient) -> None:
    found, link = page(numbers, f"{PATH}?limit=7&order=asc")
    assert found == [1, 2, 3, 4, 5, 6, 7]
    if probing(numbers):
        assert link is None  # the probe row did not come back
    else:  # the reference's rule: a full page has a next page, which is empty
        assert link == f"{PATH}?limit=7&order=asc&n=gt:7"
        assert page(numbers, link) == ([], None)


def test_next_link_from_typed_filters(numbers: TestClient) -> None:
    # the bound in the paging direction is replaced, the other kept in place, the text as the client wrote it
    found, link = page(numbers, f"{PATH}?N=gte:02&n=lt:6&LIMIT=02&order=asc")
    assert (found, link) == ([2, 3], f"{PATH}?n=lt:6&n=gt:3&limit=02&order=asc")
    assert link is not None
    assert page(numbers, link) == (
        [4, 5],
        None,  # the rest of the range is empty: no link, whatever the probe says
    )
    # a lone bound in the paging direction moves to the end; bounds the other way and ne stay
    found, link = page(numbers, f"{PATH}?n=lt:7&limit=2&n=ne:5&order=desc")
    assert (found, link) == ([6, 4], f"{PATH}?n=ne:5&n=lt:4&limit=2&order=desc")
    # an equality-only filter still gets a bound, so the link never repeats the request
    found, link = page(numbers, f"{PATH}?n=3&limit=1")
    assert (found, link) == ([3], None if probing(numbers) else f"{PATH}?n=3&n=lt:3&limit=1")


def test_no_link_when_the_rest_of_the_range_is_empty(numbers: TestClient) -> None:
    found, link = page(numbers, f"{PATH}?n=gt:2&n=lt:5&limit=2&order=asc")
    assert (found, link) == ([3, 4], None)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("none=true", id="nothing-matches"),
        pytest.param("n=gt:7", id="no-rows"),
        pytest.param("n=gt:3&n=lt:2&limit=1", id="empty-range"),
    ],
)
def test_empty_page(numbers: TestClient, query: str) -> None:
    response = numbers.get(f"{PATH}?{query}")
    assert response.json() == {"numbers": [], "links": {"next": None}}
    assert "link" not in response.headers


def test_bad_query_is_one_400(numbers: TestClient) -> None:
    response = numbers.get(f"{PATH}?n=x&limit=0&foo=1")
    assert response.status_code == 400
    messages = [item["message"] for item in response.json()["_status"]["messages"]]
    assert messages == ["Invalid parameter: n", "Invalid parameter: limit", "Unknown query parameter: foo"]


def test_endpoint_declaration() -> None:
    endpoint = SPEC.endpoint()
    assert (endpoint.path, endpoint.params, endpoint.cache_control) == (PATH, PARAMS, "public, max-age=0")
    assert endpoint.response_schema["required"] == ["numbers", "links"]
    assert Op.EQ in N.ops


def test_a_list_declares_exactly_one_renderer() -> None:
    with pytest.raises(TypeError, match="exactly one of render and render_with"):
        dataclasses.replace(SPEC, render=lambda row: {"n": row["n"]})
    with pytest.raises(TypeError, match="exactly one of render and render_with"):
        dataclasses.replace(SPEC, render_with=None)
