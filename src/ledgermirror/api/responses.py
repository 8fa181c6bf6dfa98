"""Rendering JSON answers: body bytes, ETag and 304, gzip, HEAD, CORS and cache headers, in one place."""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ledgermirror.api.errors import ApiError
from ledgermirror.etag import etag_matches, etag_of

JSON_TYPE = "application/json; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
GZIP_MIN_BYTES = 1024
_ANY_ORIGIN = (b"access-control-allow-origin", b"*")
_VARY = (b"vary", b"Accept-Encoding")


@functools.lru_cache(maxsize=64)
def _cache_control_line(value: str) -> bytes:
    """A ``Cache-Control`` value encoded once (there are as many as max-ages)."""
    return value.encode("latin-1")


@functools.lru_cache(maxsize=256)
def _header_line(name: str, value: str) -> tuple[bytes, bytes]:
    """An extra header encoded once per name and value (the freshness headers change once per new newest
    timestamp, and every answer until then carries the same)."""
    return (name.lower().encode("latin-1"), value.encode("latin-1"))


@functools.lru_cache(maxsize=16)
def _type_line(content_type: str) -> tuple[bytes, bytes]:
    return (b"content-type", content_type.encode("latin-1"))


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
    _lines: list[tuple[bytes, bytes]] | None = None
    _plain: list[tuple[bytes, bytes]] | None = None

    def __post_init__(self) -> None:
        if not self.etag:
            self.etag = etag_of(self.body)

    def gzipped(self) -> bytes:
        if self._gzipped is None:
            self._gzipped = gzip.compress(self.body, compresslevel=5, mtime=0)
        return self._gzipped

    def respond(self, request: Request) -> ReadyResponse:
        """This answer for ``request``: ``304`` when its ``If-None-Match`` names the tag, gzip when it accepts
        it and the body is large enough, no body for ``HEAD``. The header lines are encoded once per answer
        (:meth:`_lines`), not once per request: a cached answer is sent many times."""
        if_none_match: bytes | None = None
        accept_encoding: bytes | None = None
        for name, value in request.scope["headers"]:  # the first of each, as Starlette's Headers.get reads
            if name == b"if-none-match":
                if if_none_match is None:
                    if_none_match = value
            elif name == b"accept-encoding" and accept_encoding is None:
                accept_encoding = value
        lines = self._lines or self._encode_lines()
        if if_none_match is not None and etag_matches(if_none_match.decode("latin-1"), self.etag):
            return ReadyResponse(304, lines, b"")
        body = self.body
        head = request.scope["method"] == "HEAD"
        if len(body) >= GZIP_MIN_BYTES and accept_encoding is not None and b"gzip" in accept_encoding:
            body = self.gzipped()
            lines = [*lines, (b"content-encoding", b"gzip")]
        elif not head:
            return ReadyResponse(self.status, self._plain or self._encode_plain(lines), body)
        lines = [*lines, (b"content-length", str(len(body)).encode()), _type_line(self.content_type)]
        return ReadyResponse(self.status, lines, b"" if head else body)

    def _encode_lines(self) -> list[tuple[bytes, bytes]]:
        """The header lines every response of this answer carries (before the content lines), in the order
        Starlette's ``Response`` would send them."""
        lines = [
            (b"cache-control", _cache_control_line(self.cache_control)),
            (b"etag", self.etag.encode("latin-1")),
            _ANY_ORIGIN,
            _VARY,
        ]
        for name, value in self.extra_headers.items():
            line = _header_line(name, value)
            for index, (known, _) in enumerate(lines):
                if known == line[0]:  # a dict's update: the value replaced in its place
                    lines[index] = line
                    break
            else:
                lines.append(line)
        if self.link is not None:
            lines.append((b"link", f'<{self.link}>; rel="next"'.encode("latin-1")))
        self._lines = lines
        return lines

    def _encode_plain(self, lines: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """The lines of the plain (not compressed, not ``HEAD``) response."""
        self._plain = [*lines, (b"content-length", str(len(self.body)).encode()), _type_line(self.content_type)]
        return self._plain


class ReadyResponse:
    """An ASGI response whose header lines are already encoded (what Starlette's ``Response`` builds from a
    dict on every request)."""

    __slots__ = ("body", "headers", "status_code")

    def __init__(self, status_code: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


def render_json(payload: Any, *, cache_control: str, max_age: int, link: str | None = None) -> Rendered:
    return Rendered(orjson.dumps(payload), cache_control, max_age, link)


def error_response(error: ApiError) -> Response:
    return Response(
        error.body(),
        status_code=error.status,
        headers={"access-control-allow-origin": "*"},
        media_type=JSON_TYPE,
    )
