"""The direct lane: an anonymous ``GET`` or ``HEAD`` of a JSON endpoint, nearly every request the API serves,
skips the middleware stack and does its work inline, once.

What the stack does for such a request, the lane does the same way and with the same objects: the request
counted and timed by route (``metrics/http.py``: the same :class:`HttpMetrics`), a turn in the admission line
(the same :class:`~ledgermirror.api.admission.Admission`, so both ways share its slots), the route found by
:class:`~ledgermirror.api.routing.PathIndex` and the endpoint called as ``DirectDispatch`` would. What it leaves
out has nothing to do for it: the trailing slash (the lane takes no path ending in ``/``), Basic credentials
(none: a request with an ``Authorization`` header takes the stack), and Starlette's outermost error middleware,
whose work the lane does itself (an error that escapes the endpoint is logged and answered ``500`` with our error
body). Measured with ``bench/apicpu``: the five middleware calls and two ``send`` wrappers per request were a
tenth of a one-row answer's CPU (docs/performance.md).
"""

from __future__ import annotations

import logging
import time

from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ledgermirror.api.admission import REFUSAL, Admission
from ledgermirror.api.endpoint import Endpoint
from ledgermirror.api.errors import InternalError, ServiceUnavailable
from ledgermirror.api.responses import ReadyResponse, error_response
from ledgermirror.api.routing import PathIndex
from ledgermirror.metrics.http import HttpMetrics

_log = logging.getLogger(__name__)

_METHODS = frozenset({"GET", "HEAD"})


class DirectLane:
    def __init__(
        self, index: PathIndex, endpoints: list[tuple[Route, Endpoint]], admission: Admission, metrics: HttpMetrics
    ) -> None:
        self.index = index
        self.endpoints = {id(route): endpoint for route, endpoint in endpoints}  # a Route is unhashable
        self.admission = admission
        self.metrics = metrics

    def find(self, scope: Scope) -> tuple[Route, Endpoint, dict[str, object]] | None:
        """The route, endpoint and path parameters of a request the lane takes; None for any other."""
        if scope["type"] != "http" or scope["method"] not in _METHODS or scope.get("root_path"):
            return None
        path: str = scope["path"]
        if path.endswith("/"):
            return None
        for name, _ in scope["headers"]:
            if name == b"authorization":
                return None
        found = self.index.first_match(path)
        if found is None:
            return None
        route, params = found
        endpoint = self.endpoints.get(id(route))
        return None if endpoint is None else (route, endpoint, params)

    async def serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        found: tuple[Route, Endpoint, dict[str, object]],
    ) -> None:
        route, endpoint, params = found
        scope["route"] = route
        scope["endpoint"] = route.endpoint
        scope["path_params"] = params
        metrics = self.metrics
        admission = self.admission
        started = time.perf_counter()
        status = 500
        metrics.started()
        try:
            if not admission.take_free() and not await admission.wait_turn():
                status = 503
                await error_response(ServiceUnavailable(REFUSAL))(scope, receive, send)
                return
            try:
                try:
                    response = await endpoint.serve(Request(scope, receive, send))
                except Exception:
                    _log.exception("unhandled error", extra={"path": scope["path"]})
                    response = error_response(InternalError())
                status = response.status_code
                if type(response) is ReadyResponse:  # its two messages sent here: no coroutine of its own
                    await send({"type": "http.response.start", "status": status, "headers": response.headers})
                    await send({"type": "http.response.body", "body": response.body})
                else:
                    await response(scope, receive, send)
            finally:
                admission.pass_on()
        finally:
            metrics.finished()
            metrics.record(route.path, scope["method"], status, time.perf_counter() - started)
