"""Rendering JSON answers: body bytes, ETag and 304, gzip, HEAD, CORS and cache headers, in one place."""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ledgermirror.api.errors import ApiError
from ledgermirror.etag import etag_matches, etag_of

JSON_TYPE = "application/json; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
GZIP_MIN_BYTES = 1024


@dataclass(slots=True)
class Rendered:
    """A finished 2xx answer, cacheable and shareable between GET and HEAD."""

    body: bytes
    cache_control: str
    max_age: int
    link: str | None = None
    content_type: str = JSON_TYPE
    status: int = 200
    extra_headers: dict[str, str] = field(default_factory=dict)
    etag: str = ""
    _gzipped: bytes | None = None

    def __post_init__(self) -> None:
        if not self.etag:
            self.etag = etag_of(self.body)

    def gzipped(self) -> bytes:
        if self._gzipped is None:
            self._gzipped = gzip.compress(self.body, compresslevel=5, mtime=0)
        return self._gzipped

    def respond(self, request: Request) -> Response:
        headers = {
            "cache-control": self.cache_control,
            "etag": self.etag,
            "access-control-allow-origin": "*",
            "vary": "Accept-Encoding",
            **self.extra_headers,
        }
        if self.link is not None:
            headers["link"] = f'<{self.link}>; rel="next"'
        if etag_matches(request.headers.get("if-none-match"), self.etag):
            return Response(status_code=304, headers=headers)
        body = self.body
        if len(body) >= GZIP_MIN_BYTES and "gzip" in request.headers.get("accept-encoding", ""):
            body = self.gzipped()
            headers["content-encoding"] = "gzip"
        if request.method == "HEAD":
            headers["content-length"] = str(len(body))
            body = b""
        return Response(body, status_code=self.status, headers=headers, media_type=self.content_type)


def render_json(payload: Any, *, cache_control: str, max_age: int, link: str | None = None) -> Rendered:
    return Rendered(orjson.dumps(payload), cache_control, max_age, link)


def error_response(error: ApiError) -> Response:
    return Response(
        error.body(),
        status_code=error.status,
        headers={"access-control-allow-origin": "*"},
        media_type=JSON_TYPE,
    )
