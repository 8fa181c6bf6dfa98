"""The request pipeline shared by every JSON endpoint: cache lookup, parse -> plan -> query -> render, errors.

A resource supplies an :class:`Endpoint`: its path, parameter set, cache policy, OpenAPI text and an async
``handler(request, ctx) -> Page``. Everything around the handler (response cache, ETag/304, gzip, HEAD, the
error envelope, 500s that never leak internals) happens here, once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.api.context import AppContext, context_of
from ledgermirror.api.errors import ANSWERED, InternalError, api_error
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.responses import TEXT_TYPE, Rendered, error_response, render_json

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Page:
    """A handler's answer: a JSON payload (and its next link), or plain text when ``text`` is set."""

    payload: dict[str, Any]
    next_link: str | None = None
    text: str | None = None


Handler = Callable[[Request, AppContext], Awaitable[Page]]


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

    @property
    def cache_control(self) -> str:
        return f"public, max-age={self.max_age}"

    def route(self) -> Route:
        return Route(self.path, self._serve, methods=["GET"])

    async def _serve(self, request: Request) -> Response:
        ctx = context_of(request)
        key = request.scope["path"] + "?" + request.scope["query_string"].decode("latin-1")
        rendered = ctx.cache.get(key)
        if rendered is None:
            try:
                page = await self.handler(request, ctx)
            except ANSWERED as error:
                return error_response(api_error(error))
            except Exception:
                _log.exception("unhandled error", extra={"path": request.scope["path"]})
                return error_response(InternalError())
            if page.text is not None:
                rendered = Rendered(page.text.encode(), self.cache_control, self.max_age, content_type=TEXT_TYPE)
            else:
                rendered = render_json(
                    page.payload, cache_control=self.cache_control, max_age=self.max_age, link=page.next_link
                )
            ctx.cache.put(key, rendered, self.max_age)
        return rendered.respond(request)
