"""The list pipeline: every paginated list endpoint is a :class:`ListSpec`, served by :func:`serve_list`.

A list declares what is particular to it: its parameters (``ParamSet``), a ``locate`` step (the path's
resources, read before the query string so that their 400s and 404s come first; ``query_first`` when the path,
if any, is read after it), a ``prepare`` step (the located path, the parsed query -> whatever the plan needs:
EVM addresses resolved, the route's rules checked), a ``plan`` (filters -> ``Select`` for a row limit and
order), a ``render`` (row -> JSON; ``render_with`` when it needs the context), its pagination ``anchors`` (the
last row -> next-link bounds), its default order, cache max-age and OpenAPI text.

:func:`serve_list` does the rest, once for all: it parses the query string, then the row limit (``limit`` or the
default), the order, the probe (one row more than the page when ``settings.pagination_probe``; otherwise the
reference's rule, "a full page has a next page"), the slice, the next link built from the typed filters, and the
``{items, links}`` body. A list read in two phases (``/transactions``: the page's keys through the indexes, then
their details) plans the keys and declares a ``load`` for the details; a list whose window may be cut short (the
reference's ``bindTimestampRange``) declares ``continues``, the next link of a page that ran out of rows. A
``header`` gives keys the body carries before the list, and a ``status`` hook a 2xx other than 200.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import ParamSet, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Select, Statement

C = TypeVar("C")
L = TypeVar("L")
Row = Any


class NothingMatches(Exception):
    """Raised by ``prepare`` or ``plan`` when the answer is known to be empty without asking the database (an
    EVM address no entity has, equalities outside the range): the page is empty, with no next link."""


Locate = Callable[[Request, AppContext], Awaitable[L]]
"""``locate(request, ctx)``: the path's resources, read before the query string (``query_first``: none)."""
Prepare = Callable[[L, ParsedQuery, AppContext], Awaitable[C]]
"""``prepare(located, query, ctx)``: what the plan, render and anchors need; may raise :class:`NothingMatches`."""
Plan = Callable[[C, ParsedQuery, int, Order], Select | Statement]
"""``plan(context, query, row_limit, order)``: a ``Select``, or a ``template`` statement that honours the limit."""
Load = Callable[[C, list[Row], AppContext], Awaitable[list[Row]]]
"""A second query for a two-phase list: the page's planned rows (its keys) -> the rows ``render`` reads."""
Continues = Callable[[C, ParsedQuery, Row | None], Sequence[Anchor]]
"""The next link's anchors when the rows ran out but the list goes on (a cut timestamp window), given the page's
last row (None: the page is empty); empty: none."""
RenderRow = Callable[[Row], dict[str, Any]]
Render = Callable[[C, Row], dict[str, Any]]
Anchors = Callable[[C, ParsedQuery, Row, AppContext], Sequence[Anchor]]
"""The next link's anchors from the page's last row; empty: the page is the last one."""
Header = Callable[[C | None, Sequence[Row]], dict[str, Any]]
"""``header(context, rows)``: the keys before the list; ``context`` is None when nothing matched."""


async def query_first(request: Request, ctx: AppContext) -> Request:
    """The ``locate`` of a list that reads nothing of its path before the query string: the request itself."""
    return request


async def no_context(located: object, query: ParsedQuery, ctx: AppContext) -> None:
    """The ``prepare`` of a list whose plan needs nothing but the parsed query."""
    return None


@dataclass(frozen=True)
class ListSpec(Generic[L, C]):
    path: str
    items: str
    """The body's key for the list (``tokens``, ``allowances``, ...)."""
    params: ParamSet
    default_order: Order
    locate: Locate[L]
    prepare: Prepare[L, C]
    plan: Plan[C]
    anchors: Anchors[C]
    max_age: int
    summary: str
    description: str
    item_schema: dict[str, Any]
    tag: str
    render: RenderRow | None = None
    """Row -> JSON, for a list whose items need nothing of the context; else ``render_with``."""
    render_with: Render[C] | None = None
    """``render_with(context, row)``: row -> JSON with the context (exactly one of the two is given)."""
    path_params: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    load: Load[C] | None = None
    continues: Continues[C] | None = None
    header: Header[C] | None = None
    """Keys the body carries before the list, from the page's rows (``/balances`` and ``/tokens/{id}/balances``:
    ``timestamp``; a hook's storage: ``hook_id``, ``owner_id``); the context is None when nothing matched."""
    header_schema: dict[str, Any] = field(default_factory=dict)
    """The OpenAPI schemas of the ``header`` keys."""
    status: Callable[[C, Sequence[Row]], int] | None = None
    """The page's 2xx status from its rows (``206`` for an NFT history whose mint is missing); default 200."""
    extra_responses: dict[str, Any] = field(default_factory=dict)
    """OpenAPI responses beyond 200/400/404/503 (the ``206``)."""

    def __post_init__(self) -> None:
        if (self.render is None) == (self.render_with is None):
            raise TypeError(f"{self.path}: give exactly one of render and render_with")

    def endpoint(self) -> Endpoint:
        return Endpoint(
            path=self.path,
            handler=functools.partial(serve_list, self),  # no coroutine of its own around the list's
            params=self.params,
            max_age=self.max_age,
            summary=self.summary,
            description=self.description,
            response_schema=schemas.list_response(self.items, self.item_schema, self.header_schema),
            tag=self.tag,
            path_params=self.path_params,
            extra_responses=self.extra_responses,
        )


def probe_limit(limit: int, *, probe: bool) -> int:
    """The rows to ask for: one more than the page when probing for a next page."""
    return limit + 1 if probe else limit


def has_more(found: int, limit: int, *, probe: bool) -> bool:
    """Whether a next page exists: the probe row came back, or (the reference's rule) the page is full."""
    return found > limit if probe else found == limit


def empty_page(items: str, header: dict[str, Any] | None = None) -> Page:
    return Page({**(header or {}), items: [], "links": {"next": None}})


async def serve_list(spec: ListSpec[L, C], request: Request, ctx: AppContext) -> Page:
    """Locate, parse, prepare, plan, probe, slice, link and render one page of a list."""
    try:
        located = await spec.locate(request, ctx)
        query = query_of(request, ctx, spec.params)
        context = await spec.prepare(located, query, ctx)
        limit = query.last(LIMIT, ctx.settings.limit_default)
        order = query.last(ORDER, spec.default_order)
        probe = ctx.settings.pagination_probe
        select = spec.plan(context, query, probe_limit(limit, probe=probe), order)
    except NothingMatches:
        return empty_page(spec.items, spec.header(None, []) if spec.header else None)
    rows = await ctx.database.fetch(select.build() if isinstance(select, Select) else select)
    more = has_more(len(rows), limit, probe=probe)
    rows = rows[:limit]
    link = None
    anchors: Sequence[Anchor] = ()
    if more and rows:
        anchors = spec.anchors(context, query, rows[-1], ctx)
    elif spec.continues is not None:
        anchors = spec.continues(context, query, rows[-1] if rows else None)
    if anchors:
        link = next_link(request.scope["path"], query.given, anchors, order)
    if spec.load is not None and rows:
        rows = await spec.load(context, rows, ctx)
    header = spec.header(context, rows) if spec.header else {}
    if spec.render is not None:
        items = [spec.render(row) for row in rows]
    else:
        assert spec.render_with is not None
        items = [spec.render_with(context, row) for row in rows]
    status = spec.status(context, rows) if spec.status is not None else 200
    return Page({**header, spec.items: items, "links": {"next": link}}, link, status=status)
