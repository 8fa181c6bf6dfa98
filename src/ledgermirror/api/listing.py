"""The list pipeline: every paginated list endpoint is a :class:`ListSpec`, served by :func:`serve_list`.

A list declares what is particular to it: its parameters (``ParamSet``), a ``prepare`` step (parse the query,
resolve the path account or EVM addresses, check the route's rules; returns the parsed query and whatever the
plan needs), a ``plan`` (filters -> ``Select`` for a row limit and order), a ``render`` (row -> JSON), its
pagination ``anchors`` (the last row -> next-link bounds), its default order, cache max-age and OpenAPI text.

:func:`serve_list` does the rest, once for all: the row limit (``limit`` or the default), the order, the probe
(one row more than the page when ``settings.pagination_probe``; otherwise the reference's rule, "a full page
has a next page"), the slice, the next link built from the typed filters, and the ``{items, links}`` body.
A list read in two phases (``/transactions``: the page's keys through the indexes, then their details) plans
the keys and declares a ``load`` for the details; a list whose window may be cut short (the reference's
``bindTimestampRange``) declares ``continues``, the next link of a page that ran out of rows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import ParamSet, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Select, Statement

C = TypeVar("C")
Row = Any


class NothingMatches(Exception):
    """Raised by ``prepare`` or ``plan`` when the answer is known to be empty without asking the database (an
    EVM address no entity has, equalities outside the range): the page is empty, with no next link."""


@dataclass(frozen=True, slots=True)
class Prepared(Generic[C]):
    """The outcome of a list's ``prepare``: the parsed query and what its plan, render and anchors need."""

    query: ParsedQuery
    context: C


Prepare = Callable[[Request, AppContext], Awaitable[Prepared[C]]]
Plan = Callable[[C, ParsedQuery, int, Order], Select | Statement]
"""``plan(context, query, row_limit, order)``: a ``Select``, or a ``template`` statement that honours the limit."""
Load = Callable[[C, list[Row], AppContext], Awaitable[list[Row]]]
"""A second query for a two-phase list: the page's planned rows (its keys) -> the rows ``render`` reads."""
Continues = Callable[[C, ParsedQuery, Row | None], Sequence[Anchor]]
"""The next link's anchors when the rows ran out but the list goes on (a cut timestamp window), given the page's
last row (None: the page is empty); empty: none."""
Render = Callable[[C, Row], dict[str, Any]]
Anchors = Callable[[C, ParsedQuery, Row, AppContext], Sequence[Anchor]]
Header = Callable[[C | None, Sequence[Row]], dict[str, Any]]
"""``header(context, rows)``: the keys before the list; ``context`` is None when nothing matched."""
"""The next link's anchors from the page's last row; empty: the page is the last one."""


@dataclass(frozen=True)
class ListSpec(Generic[C]):
    path: str
    items: str
    """The body's key for the list (``tokens``, ``allowances``, ...)."""
    params: ParamSet
    default_order: Order
    prepare: Prepare[C]
    plan: Plan[C]
    render: Render[C]
    anchors: Anchors[C]
    max_age: int
    summary: str
    description: str
    item_schema: dict[str, Any]
    tag: str
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

    def endpoint(self) -> Endpoint:
        async def handler(request: Request, ctx: AppContext) -> Page:
            return await serve_list(self, request, ctx)

        return Endpoint(
            path=self.path,
            handler=handler,
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


async def serve_list(spec: ListSpec[C], request: Request, ctx: AppContext) -> Page:
    """Prepare, plan, probe, slice, link and render one page of a list."""
    try:
        prepared = await spec.prepare(request, ctx)
        query, context = prepared.query, prepared.context
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
    items = [spec.render(context, row) for row in rows]
    status = spec.status(context, rows) if spec.status is not None else 200
    return Page({**header, spec.items: items, "links": {"next": link}}, link, status=status)
