"""The gRPC server: both mirror services, server reflection and ``grpc.health.v1``, on grpcio's asyncio server.

:class:`GrpcServer` is the server inside an event loop (tests start it in their own loop); :func:`start_process`
runs it in a process of its own beside the REST API (``ledgermirror serve`` and ``demo``), so that topic
fan-out and REST requests never share a core's time, and :class:`ServerProcess` stops it: every open stream
ends with ``UNAVAILABLE`` (the SDKs resubscribe from where they were), then the server stops.

Responses of ``subscribeTopic`` are serialized once per message by the topic hub and written as bytes (the
method's response serializer is the identity); request bodies are limited to 1 KiB as in the reference.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import multiprocessing
import multiprocessing.synchronize
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from ledgermirror import log
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database, api_database
from ledgermirror.grpc_api import wire
from ledgermirror.grpc_api.consensus import ConsensusService, SubscriptionRules
from ledgermirror.grpc_api.failures import UNKNOWN, RpcFailure, data_source_timeout, data_source_unavailable
from ledgermirror.grpc_api.limits import SubscriptionLimits
from ledgermirror.grpc_api.metrics import GrpcMetrics
from ledgermirror.grpc_api.network import NetworkService
from ledgermirror.grpc_api.topic_hub import TopicHub
from ledgermirror.settings import Settings

_log = logging.getLogger("ledgermirror.grpc")
_Context = grpc.aio.ServicerContext[Any, Any]
_Handler = Callable[[Any, _Context], Awaitable[None]]
SHUTDOWN_GRACE_SECONDS = 5.0
MAX_REQUEST_BYTES = 1024
LIVE_PAGE = 5000


def server_options(settings: Settings) -> list[tuple[str, Any]]:
    return [
        ("grpc.so_reuseport", 0),  # a second server on a taken port fails instead of sharing it
        ("grpc.max_concurrent_streams", settings.grpc_max_streams_per_connection),
        ("grpc.keepalive_time_ms", settings.grpc_keep_alive_seconds * 1000),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_connection_idle_ms", 600_000),
        ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
    ]


def subscription_rules(settings: Settings) -> SubscriptionRules:
    return SubscriptionRules(
        end_time_interval_seconds=settings.grpc_end_time_interval_ms / 1000,
        max_seconds=float(settings.grpc_max_subscription_seconds),
        idle_seconds=float(settings.grpc_idle_subscription_seconds),
        check_topic_exists=settings.grpc_check_topic_exists,
    )


class GrpcServer:
    """Both services on ``host:port`` (port 0: any free port; :attr:`port` is the one bound)."""

    def __init__(
        self,
        settings: Settings,
        dsn: str,
        *,
        listen_dsn: str | None = None,
        metrics: GrpcMetrics | None = None,
        rules: SubscriptionRules | None = None,
    ) -> None:
        self.settings = settings
        self.dsn = dsn
        self.listen_dsn: str | None = listen_dsn or dsn
        self.metrics = metrics if metrics is not None else GrpcMetrics()
        self.rules = rules if rules is not None else subscription_rules(settings)
        self.port = 0
        self.server: grpc.aio.Server | None = None
        self.hub: TopicHub | None = None
        self.db: Database | None = None
        self.health: HealthServicer | None = None
        self._watch: asyncio.Task[None] | None = None

    async def start(self, host: str | None = None, port: int | None = None) -> int:
        settings = self.settings
        classes = await asyncio.to_thread(wire.mirror)
        pool_settings = dataclasses.replace(settings, pool_max_size=settings.grpc_db_connections)
        self.db = api_database(self.dsn, pool_settings)
        await self.db.probe_all(timeout=1.0)
        self._watch = asyncio.create_task(self.db.watch(settings.replica_check_seconds))
        if self.db.replicated and self.listen_dsn == self.dsn:
            self.listen_dsn = settings.db_url  # a standby sends no NOTIFY: the primary's, as wake-ups only
        self.hub = TopicHub(
            self.db,
            self.listen_dsn,
            poll_seconds=settings.grpc_poll_interval_ms / 1000,
            page=LIVE_PAGE,
            buffer=settings.grpc_subscriber_buffer,
            metrics=self.metrics,
        )
        await self.hub.start()
        limits = SubscriptionLimits(settings.grpc_max_subscriptions, settings.grpc_max_subscriptions_per_client)
        consensus = ConsensusService(self.db, self.hub, limits, self.metrics, self.rules)
        network = NetworkService(self.db, settings.shard, settings.realm)

        async def get_nodes(request: Any, context: _Context) -> None:
            await network.get_nodes(request, context.write)

        server = grpc.aio.server(options=server_options(settings))
        server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    wire.CONSENSUS_SERVICE,
                    {
                        wire.SUBSCRIBE_TOPIC: grpc.unary_stream_rpc_method_handler(
                            self._guarded(wire.SUBSCRIBE_TOPIC, consensus.subscribe_topic),
                            request_deserializer=classes.ConsensusTopicQuery.FromString,
                            response_serializer=None,  # bytes, serialized once per message by the hub
                        )
                    },
                ),
                grpc.method_handlers_generic_handler(
                    wire.NETWORK_SERVICE,
                    {
                        wire.GET_NODES: grpc.unary_stream_rpc_method_handler(
                            self._guarded(wire.GET_NODES, get_nodes),
                            request_deserializer=classes.AddressBookQuery.FromString,
                            response_serializer=classes.NodeAddress.SerializeToString,
                        )
                    },
                ),
            )
        )
        self.health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        names = (*classes.service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name)
        reflection.enable_server_reflection((*names, reflection.SERVICE_NAME), server)
        address = f"{host or settings.host}:{settings.grpc_port if port is None else port}"
        bound = server.add_insecure_port(address)
        if not bound:
            raise OSError(f"cannot listen on {address}")
        await server.start()
        for name in ("", *classes.service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self.server, self.port = server, bound
        return bound

    def _guarded(self, method: str, handler: _Handler) -> _Handler:
        """The handler with every failure turned into the call's status (the reference's codes and texts)."""
        calls = self.metrics.calls

        async def run(request: Any, context: _Context) -> None:
            code = grpc.StatusCode.OK
            failure: RpcFailure | None = None
            try:
                await handler(request, context)
            except RpcFailure as error:
                failure = error
            except DatabaseUnavailable as error:
                timed_out = isinstance(error.__cause__, (asyncpg.QueryCanceledError, TimeoutError))
                failure = data_source_timeout() if timed_out else data_source_unavailable()
                _log.error("gRPC call failed: database", extra={"method": method, "error": str(error)})
            except asyncio.CancelledError:
                code = grpc.StatusCode.CANCELLED
                raise
            except grpc.aio.AbortError:
                raise
            except Exception:
                _log.exception("gRPC call failed", extra={"method": method})
                failure = RpcFailure(grpc.StatusCode.UNKNOWN, UNKNOWN)
            finally:
                calls.labels(method, (failure.code if failure else code).name).inc()
            if failure is not None:
                if failure.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND):
                    _log.warning("gRPC call refused", extra={"method": method, "error": failure.message})
                await context.abort(failure.code, failure.message)

        return run

    async def stop(self, grace: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Health to NOT_SERVING, every subscription ended ``UNAVAILABLE``, then the server and the database."""
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        if self.hub is not None:
            await self.hub.close()
        if self.server is not None:
            await self.server.stop(grace)
        if self._watch is not None:
            self._watch.cancel()
        if self.db is not None:
            await self.db.close()


# In a process of its own beside the REST API ----------------------------------------------------------------


class ServerProcess:
    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self.process = process

    def stop(self, timeout: float = SHUTDOWN_GRACE_SECONDS + 10) -> None:
        if self.process.is_alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()  # SIGTERM: the server ends its streams and stops
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def start_process(settings: Settings, dsn: str, ready_seconds: float = 60.0) -> ServerProcess:
    """The gRPC server in a new process; returns once it listens, or raises ``OSError`` if it cannot."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    process = context.Process(
        target=_process_main, args=(settings, dsn, ready), name="ledgermirror-grpc", daemon=True
    )
    process.start()
    if not ready.wait(ready_seconds) or not process.is_alive():
        ServerProcess(process).stop()
        raise OSError(f"the gRPC server could not start on {settings.host}:{settings.grpc_port}")
    return ServerProcess(process)


def _process_main(settings: Settings, dsn: str, ready: multiprocessing.synchronize.Event) -> None:
    log.configure(settings.log_level, settings.log_format)
    asyncio.run(_serve_until_signalled(settings, dsn, ready))


async def _serve_until_signalled(settings: Settings, dsn: str, ready: multiprocessing.synchronize.Event) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    server = GrpcServer(settings, dsn)
    try:
        await server.start()
    except OSError as error:
        _log.error("gRPC server cannot start", extra={"error": str(error)})
        await server.stop(0)
        return
    gc.freeze()  # what start-up made (modules, classes) is never collected: full collections stay short
    ready.set()
    await stop.wait()
    await server.stop()
