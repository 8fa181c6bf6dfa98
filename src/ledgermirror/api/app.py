"""``create_app(settings, dsn)``: the ASGI application and its single route table."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ledgermirror.api import docs_page, freshness, openapi
from ledgermirror.api.admission import Admission
from ledgermirror.api.auth import BasicAuth
from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint
from ledgermirror.api.errors import MethodNotAllowed, NotFound
from ledgermirror.api.lane import DirectLane
from ledgermirror.api.resources import health
from ledgermirror.api.resources.accounts import (
    account,
    account_airdrops,
    account_crypto_allowances,
    account_hook_storage,
    account_hooks,
    account_nft_allowances,
    account_nfts,
    account_rewards,
    account_token_allowances,
    account_tokens,
    accounts,
)
from ledgermirror.api.resources.balances import balances
from ledgermirror.api.resources.blocks import blocks
from ledgermirror.api.resources.contracts import (
    contract,
    contract_actions,
    contract_call,
    contract_evm,
    contract_logs,
    contract_prestate,
    contract_result,
    contract_results,
    contract_state,
    contracts,
)
from ledgermirror.api.resources.network import (
    network_exchangerate,
    network_fee_estimate,
    network_fees,
    network_nodes,
    network_registered_nodes,
    network_stake,
    network_supply,
)
from ledgermirror.api.resources.schedules import schedules
from ledgermirror.api.resources.tokens import (
    token_balances,
    token_info,
    token_nft_transactions,
    token_nfts,
    tokens,
)
from ledgermirror.api.resources.topics import topic_messages, topics
from ledgermirror.api.resources.transactions import transaction, transactions
from ledgermirror.api.responses import error_response
from ledgermirror.api.routing import DirectDispatch, IndexedRouter, PathIndex, literal_first
from ledgermirror.clock import Clock, SystemClock
from ledgermirror.db.pool import api_database
from ledgermirror.metrics import exposition
from ledgermirror.metrics.api import SAMPLE_SECONDS
from ledgermirror.metrics.http import HttpMetricsMiddleware
from ledgermirror.settings import Settings

_log = logging.getLogger(__name__)

ENDPOINTS: tuple[Endpoint, ...] = (
    tokens.ENDPOINT,
    account_crypto_allowances.ENDPOINT,
    account_rewards.ENDPOINT,
    network_exchangerate.ENDPOINT,
    network_fees.ENDPOINT,
    network_supply.ENDPOINT,
    network_stake.ENDPOINT,
    network_nodes.ENDPOINT,
    blocks.LIST_ENDPOINT,
    blocks.ONE_ENDPOINT,
    account_token_allowances.ENDPOINT,
    account_nfts.ENDPOINT,
    account_nft_allowances.ENDPOINT,
    account_airdrops.OUTSTANDING_ENDPOINT,
    account_airdrops.PENDING_ENDPOINT,
    accounts.ENDPOINT,
    account.ENDPOINT,
    network_fee_estimate.ENDPOINT,
    # topics, schedules, balances
    topics.ENDPOINT,
    topic_messages.LIST_ENDPOINT,
    topic_messages.BY_SEQUENCE_ENDPOINT,
    topic_messages.BY_TIMESTAMP_ENDPOINT,
    schedules.LIST_ENDPOINT,
    schedules.ONE_ENDPOINT,
    balances.ENDPOINT,
    # transactions
    transactions.ENDPOINT,
    transaction.ENDPOINT,
    # token routes, account tokens, hooks, registered nodes
    token_info.ENDPOINT,
    token_nfts.ENDPOINT,
    token_nfts.ONE_ENDPOINT,
    token_nft_transactions.ENDPOINT,
    token_balances.ENDPOINT,
    account_tokens.ENDPOINT,
    account_hooks.ENDPOINT,
    account_hook_storage.ENDPOINT,
    network_registered_nodes.ENDPOINT,
    # contract logs and actions; /contracts/results/logs is tried before /contracts/results/{id}
    # (literal_first)
    contract_logs.GLOBAL_ENDPOINT,
    contract_logs.CONTRACT_ENDPOINT,
    contract_actions.ENDPOINT,
    contract_results.CONTRACT_ENDPOINT,
    contract_results.GLOBAL_ENDPOINT,
    contract_result.BY_TIMESTAMP_ENDPOINT,
    contract_result.BY_TRANSACTION_ENDPOINT,
    # contracts: the list, the EVM routes answered 501, one contract's state, one contract. Keep
    # contract.ENDPOINT after every /api/v1/contracts/results... route: its template matches "results" too, and
    # Starlette takes the first route that matches (tests/api/test_contract_routes.py checks the order).
    contracts.ENDPOINT,
    contract_call.ENDPOINT,
    contract_evm.OPCODES_ENDPOINT,
    contract_prestate.PRESTATE_ENDPOINT,
    contract_state.ENDPOINT,
    contract.ENDPOINT,
)

_CORS_PREFLIGHT = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET,HEAD,POST",
    "access-control-allow-headers": "*, authorization",  # the wildcard does not cover Authorization (users)
    "access-control-max-age": "86400",
}


async def _not_found(request: Request, exc: Exception) -> Response:
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=_CORS_PREFLIGHT)
    return error_response(NotFound())


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    """A known path asked with a method none of its routes answers: 405 with our error body and ``Allow``."""
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=_CORS_PREFLIGHT)
    response = error_response(MethodNotAllowed.for_method(request.method))
    allow = (getattr(exc, "headers", None) or {}).get("Allow")
    if allow:  # Starlette joins a set: sort it, so the header is the same on every run
        response.headers["allow"] = ", ".join(sorted(method.strip() for method in allow.split(",")))
    return response


def create_app(settings: Settings, dsn: str, *, clock: Clock | None = None) -> Starlette:
    ctx = AppContext(settings, clock or SystemClock())
    document = openapi.build_document(
        ENDPOINTS,
        limit_default=settings.limit_default,
        limit_max=settings.limit_max,
        max_repeats=settings.max_repeated_query_parameters,
        omitted_fields=frozenset() if settings.enable_delegation_address else frozenset({"delegation_address"}),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ctx.db = api_database(dsn, settings, observer=ctx.metrics, stamp=freshness.stamp)
        await ctx.db.probe_all(timeout=1.0)  # freshness and health known before the first request
        sampler = asyncio.create_task(_sample_pool(ctx))
        watcher = asyncio.create_task(ctx.db.watch(settings.replica_check_seconds))
        try:
            yield
        finally:
            sampler.cancel()
            watcher.cancel()
            ctx.contract_workers.close()
            app.state.ctx.contract_workers.close()  # a context given to the app later (tests' reconfigure)
            await ctx.db.close()

    endpoint_routes = [(endpoint, endpoint.route()) for endpoint in literal_first(ENDPOINTS)]
    direct = [(route, endpoint.serve_direct) for endpoint, route in endpoint_routes if endpoint.method == "GET"]
    routes = [route for _, route in endpoint_routes] + health.ROUTES + docs_page.routes(document)
    routes.append(exposition.route(ctx.metrics.registry, lambda: ctx.metrics.publish(ctx.db)))
    admission = Admission(
        _unbound,
        limit=settings.max_in_flight or settings.pool_max_size,
        wait_seconds=settings.admission_wait_seconds,
    )
    app = ApiApp(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(StripTrailingSlash),
            Middleware(HttpMetricsMiddleware, metrics=ctx.metrics.http),
            Middleware(_bound, layer=admission),
            Middleware(BasicAuth),
            Middleware(DirectDispatch, routes=routes, direct=direct),
        ],
        exception_handlers={404: _not_found, 405: _method_not_allowed},
    )
    app.router = IndexedRouter(app.router.routes, redirect_slashes=False, lifespan=lifespan)
    endpoint_of = {id(route): endpoint for endpoint, route in endpoint_routes if endpoint.method == "GET"}
    app.lane = DirectLane(
        PathIndex(routes),
        [(route, endpoint_of[id(route)]) for route, _ in direct],
        admission,
        ctx.metrics.http,
    )
    app.state.ctx = ctx
    app.state.openapi = document
    return app


class ApiApp(Starlette):
    """The API's Starlette application, with its direct lane (``api/lane.py``) in front of the middleware."""

    lane: DirectLane | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lane = self.lane
        found = lane.find(scope) if lane is not None else None
        if found is None:
            await super().__call__(scope, receive, send)
            return
        assert lane is not None
        scope["app"] = self
        await lane.serve(scope, receive, send, found)


async def _unbound(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("the admission middleware is used before the middleware stack is built")


def _bound(app: ASGIApp, layer: Admission) -> Admission:
    """The one :class:`Admission` of the app (shared with the direct lane) as a layer of Starlette's stack."""
    layer.app = app
    return layer


async def _sample_pool(ctx: AppContext) -> None:
    """The pool gauges and the batched counts, every second (other workers' scrapes read them from the
    multiprocess files)."""
    while True:
        ctx.metrics.publish(ctx.db)
        await asyncio.sleep(SAMPLE_SECONDS)


class StripTrailingSlash:
    """``/api/v1/tokens/`` is ``/api/v1/tokens``, as in the reference."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and len(path) > 1 and path.endswith("/"):
            scope = dict(scope, path=path.rstrip("/") or "/")
        await self.app(scope, receive, send)
