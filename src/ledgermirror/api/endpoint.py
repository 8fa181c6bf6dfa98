"""What every JSON endpoint shares: cache lookup, the handler, rendering, and turning errors into responses.

A resource supplies an :class:`Endpoint`: its path and method, parameter set, cache policy, OpenAPI text and an
async ``handler(request, ctx) -> Page``. Everything around the handler (response cache, ETag/304, gzip, HEAD, the
error envelope, 500s that never leak internals) happens here, once. Paginated lists do not write a handler:
they declare a :class:`~ledgermirror.api.listing.ListSpec`, whose one pipeline does the paging.

A ``POST`` endpoint (the fee estimate) answers ``Cache-Control: no-store`` and is never cached.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ledgermirror.api import freshness
from ledgermirror.api.auth import USER_LIMIT
from ledgermirror.api.context import AppContext, context_of
from ledgermirror.api.errors import ANSWERED, InternalError, api_error
from ledgermirror.api.querystring.params import ParamSet, ParsedQuery
from ledgermirror.api.responses import (
    JSON_TYPE,
    TEXT_TYPE,
    ReadyResponse,
    Rendered,
    error_response,
    render_json,
)

_log = logging.getLogger(__name__)

CLIENT_CLOSED = 499
"""The status logged for a request whose client left before sending all of it (nobody receives the answer)."""


@dataclass(slots=True)  # not frozen: made for every answer, and a frozen one took 1.4 µs to make
class Page:
    """A handler's answer: a JSON payload (and its next link), or plain text when ``text`` is set."""

    payload: dict[str, Any]
    next_link: str | None = None
    text: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. ``X-Fee-Schedule``)."""
    max_age: int | None = None
    """This answer's cache max-age when it differs from the endpoint's (a schedule in its final state, a
    transaction whose schedule may still run)."""
    status: int = 200
    """A 2xx other than 200 (``206 Partial Content`` for an NFT history whose mint is missing)."""


Handler = Callable[[Request, AppContext], Awaitable[Page]]


def query_of(request: Request, ctx: AppContext, params: ParamSet) -> ParsedQuery:
    """The request's query string parsed against ``params``: typed filters, or one 400 naming every problem."""
    return params.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)


def _context(request: Request) -> AppContext:
    """The app's context, with the authenticated user's maximum ``limit`` when they have one (``api/auth.py``)."""
    ctx = context_of(request)
    limit = request.scope.get(USER_LIMIT)
    return ctx.with_limit_max(limit) if isinstance(limit, int) else ctx


def _failed(request: Request, error: Exception) -> Response:
    """The answer to a handler's failure: its 4xx or 503 when it is one of ours, 499 when the client left
    before the request was read, else a logged 500."""
    if isinstance(error, ANSWERED):
        return error_response(api_error(error))
    if isinstance(error, ClientDisconnect):
        _log.info("client disconnected before the request was read", extra={"path": request.scope["path"]})
        return Response(status_code=CLIENT_CLOSED)
    _log.exception("unhandled error", extra={"path": request.scope["path"]}, exc_info=error)
    return error_response(InternalError())


@dataclass(frozen=True, slots=True)
class Endpoint:
    path: str
    handler: Handler
    params: ParamSet
    max_age: int
    summary: str
    description: str
    response_schema: dict[str, Any]
    tag: str
    path_params: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    method: str = "GET"
    operation_id: str | None = None
    request_body: dict[str, Any] | None = None
    """The OpenAPI ``requestBody`` (POST)."""
    extra_responses: dict[str, Any] = field(default_factory=dict)
    """OpenAPI responses beyond 200/400/404/503 (e.g. 413, 415)."""
    text_response_schema: dict[str, Any] | None = None
    """The 200 answer's ``text/plain`` schema, for an endpoint that also answers text (``/network/supply?q=``)."""

    @property
    def cache_control(self) -> str:
        return "no-store" if self.method == "POST" else f"public, max-age={self.max_age}"

    def route(self) -> Route:
        return Route(
            self.path, self.serve if self.method == "GET" else self._serve_uncached, methods=[self.method]
        )

    async def _run(self, request: Request, ctx: AppContext) -> Page | Response:
        try:
            return await self.handler(request, ctx)
        except Exception as error:
            return _failed(request, error)

    async def _run_pinned(self, request: Request, ctx: AppContext) -> tuple[Page | Response, dict[str, str]]:
        """The handler's answer, every query of it read from one database (``api/freshness.py``: one that holds
        the next link's bounds, when the query string has some), and that database's freshness headers. With one
        database, nothing to choose: its headers as its last probe made them."""
        database = ctx.db
        if database is None:
            return await self._run(request, ctx), {}
        only = database.single
        if only is not None:
            page = await self._run(request, ctx)
            fresh = only.headers
        else:
            settings = ctx.settings
            floor = freshness.floor_of(
                request.scope["query_string"].decode("latin-1"), shard=settings.shard, realm=settings.realm
            )
            with database.pinned(floor):
                page = await self._run(request, ctx)
                fresh = freshness.headers_of(database.current())
        if isinstance(page, Response) and page.status_code < 500:
            page.headers.update(fresh)
        return page, fresh

    async def _serve_uncached(self, request: Request) -> Response:
        page, fresh = await self._run_pinned(request, _context(request))
        if isinstance(page, Response):
            return page
        headers = {
            "cache-control": self.cache_control,
            "access-control-allow-origin": "*",
            **fresh,
            **page.headers,
        }
        return Response(orjson.dumps(page.payload), status_code=page.status, headers=headers, media_type=JSON_TYPE)

    async def serve_direct(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ``GET`` route as a plain ASGI app, for ``api/routing.DirectDispatch``: the same answer as through
        Starlette's route (which wraps :meth:`serve` in a request-response function and exception handling
        that :meth:`_run` makes idle), without those layers."""
        response = await self.serve(Request(scope, receive, send))
        await response(scope, receive, send)

    async def serve(self, request: Request) -> Response | ReadyResponse:
        """A ``GET`` (or ``HEAD``): the cached answer, else the handler's, rendered; errors as responses."""
        ctx = _context(request)
        key = request.scope["path"] + "?" + request.scope["query_string"].decode("latin-1")
        if USER_LIMIT in request.scope:
            key += f"\x00{ctx.parse_ctx.limit_max}"  # a user's answer is theirs: their limit shapes it
        rendered = ctx.cache.get(key)
        if rendered is not None:
            ctx.metrics.cache_hit_count += 1
        else:
            ctx.metrics.cache_miss_count += 1
            database = ctx.db
            only = None if database is None else database.single
            if only is not None:  # one database: _run_pinned's first case, without its coroutine or _run's
                page: Page | Response
                try:
                    page = await self.handler(request, ctx)
                except Exception as error:
                    page = _failed(request, error)
                fresh = only.headers
                if isinstance(page, Response) and page.status_code < 500:
                    page.headers.update(fresh)
            else:
                page, fresh = await self._run_pinned(request, ctx)
            if isinstance(page, Response):
                return page
            max_age = self.max_age if page.max_age is None else page.max_age
            cache_control = f"public, max-age={max_age}"
            if page.text is not None:
                rendered = Rendered(page.text.encode(), cache_control, max_age, content_type=TEXT_TYPE)
            else:
                rendered = render_json(
                    page.payload, cache_control=cache_control, max_age=max_age, link=page.next_link
                )
                rendered.status = page.status
            rendered.extra_headers.update(fresh)
            rendered.extra_headers.update(page.headers)
            ctx.cache.put(key, rendered, max_age)
        return rendered.respond(request)
