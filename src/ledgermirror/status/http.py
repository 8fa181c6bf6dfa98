"""HTTP details of the public JSON: ETag/304, HEAD, CORS ``*``, a short cache, and the in-memory body cache."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ledgermirror.clock import Clock
from ledgermirror.etag import etag_matches, etag_of
from ledgermirror.ttl_cache import TtlCache

CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, HEAD, OPTIONS",
    "access-control-allow-headers": "*",
}
JSON_TYPE = "application/json; charset=utf-8"


def json_response(request: Request, body: bytes, max_age: int, media_type: str = JSON_TYPE) -> Response:
    """A public answer (JSON unless told): 304 on a matching ETag; HEAD gets the headers without the body."""
    etag = etag_of(body)
    headers = {**CORS, "etag": etag, "cache-control": f"public, max-age={max_age}", "vary": "Accept-Encoding"}
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    if request.method == "HEAD":
        headers["content-length"] = str(len(body))
        return Response(b"", headers=headers, media_type=media_type)
    return Response(body, headers=headers, media_type=media_type)


def preflight() -> Response:
    return Response(status_code=204, headers={**CORS, "access-control-max-age": "86400"})


def not_found() -> Response:
    return Response(b"", status_code=404, headers=CORS)


BODY_CACHE_ENTRIES = 1024


def body_cache(clock: Clock, ttl_seconds: int) -> TtlCache[bytes]:
    """Rendered bodies per path, kept ``ttl_seconds`` of the injected clock; cleared on every write."""
    return TtlCache(BODY_CACHE_ENTRIES, ttl_seconds=ttl_seconds, now=lambda: clock.now_ns() / 1_000_000_000)
