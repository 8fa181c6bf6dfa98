"""``ledgermirror serve``: the REST API under uvicorn (one or several workers) on the database the settings name,
and what ``demo`` shares with it (the listen check, the announcement, serving a prepared database)."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import errno
import logging
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from ledgermirror import http_server
from ledgermirror.db.warm_up import warm_up_at
from ledgermirror.exits import EXIT_CANNOT_LISTEN
from ledgermirror.grpc_api import server as grpc_api_server
from ledgermirror.metrics import exposition
from ledgermirror.runtime import Prepared, check_reachable, exit_cleanly_on_sigterm, prepare
from ledgermirror.settings import Settings

_log = logging.getLogger("ledgermirror")


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror serve`` (``cli.COMMANDS``)."""
    if not can_listen(settings):
        return EXIT_CANNOT_LISTEN
    return serve(settings, log_format)


def can_listen(settings: Settings) -> bool:
    """Whether the servers may listen where the settings say (REST, and gRPC unless off); if not, says why on
    stderr."""
    problem = listen_problem(settings.host, settings.port)
    if problem is None and settings.grpc_port:
        problem = listen_problem(settings.host, settings.grpc_port, "--grpc-port")
    if problem is not None:
        print(f"ledgermirror: {problem}", file=sys.stderr)
    return problem is None


def listen_problem(host: str, port: int, option: str = "--port") -> str | None:
    """Why a server could not listen on ``host:port`` (bound and released at once, as uvicorn will bind it), or
    None. Checked before anything else starts, so a second server on a busy port says so and stops."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        return f"cannot listen on {host}:{port}: {error.strerror}"
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use (is another ledgermirror serve or demo running?); "
                    f"stop it or choose another port with {option}"
                )
            return f"cannot listen on {host}:{port}: {error.strerror}"
    return None


def announce(what: str, url: str, log_format: str) -> None:
    """Where the server will answer: for people, the URL alone on its own line; for machines, one log record."""
    if log_format == "text":
        print(f"{what} (Ctrl+C stops it):\n{url}", file=sys.stderr, flush=True)
    else:
        _log.info(what, extra={"url": url})


def serve(settings: Settings, log_format: str, prepared: Prepared | None = None, what: str = "") -> int:
    """Serve the API on ``prepared`` (else the database the settings name) until stopped; stops the embedded
    server, if any, after."""
    prepared = prepared or prepare(settings)
    try:
        check_reachable(prepared.api_url)
        if settings.warm_up_seconds > 0:
            asyncio.run(warm_up_at(prepared.owner_url, settings.warm_up_seconds))
        base = f"http://{settings.host}:{settings.port}"
        if settings.workers > 1 or settings.grpc_port:
            _share_metrics_between_workers()
        try:
            grpc_server = grpc_api_server.start_process(settings, prepared.api_url) if settings.grpc_port else None
        except OSError as error:  # taken since the check, or the server failed to start (its log says why)
            print(f"ledgermirror: {error}", file=sys.stderr)
            return EXIT_CANNOT_LISTEN
        try:
            if grpc_server is not None:
                announce("Ledger Mirror gRPC API at", f"{settings.host}:{settings.grpc_port}", log_format)
            announce(what or "Ledger Mirror REST API, with its docs at", f"{base}/api/v1/docs", log_format)
            _run_uvicorn(settings, prepared.api_url)
        finally:
            if grpc_server is not None:
                grpc_server.stop()
    finally:
        prepared.stop()
    return 0


def _share_metrics_between_workers() -> None:
    """``/metrics`` sums every worker's values: a fresh multiprocess folder (the operator's
    ``PROMETHEUS_MULTIPROC_DIR`` if set, else a temporary one removed at exit) before the workers start."""
    chosen = os.environ.get(exposition.MULTIPROCESS_ENV)
    folder = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="ledgermirror-metrics-"))
    exposition.prepare_multiprocess(folder)
    if not chosen:
        atexit.register(shutil.rmtree, folder, True)


def _run_uvicorn(settings: Settings, api_url: str) -> None:
    exit_cleanly_on_sigterm()
    os.environ["LEDGERMIRROR_API_DB_URL"] = api_url
    sys.path.insert(0, str(Path(__file__).parents[2]))  # workers import the app by name (uvicorn's app_dir)
    config = http_server.bounded_config(
        "ledgermirror.api.asgi:app_from_env",
        settings,
        host=settings.host,
        port=settings.port,
        factory=True,
        workers=settings.workers,
        loop="uvloop",
    )
    http_server.run(config)
