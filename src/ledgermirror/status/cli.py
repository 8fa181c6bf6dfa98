"""``ledgermirror status ...``: serve the status service, manage API keys, and every management action (the
command line itself is declared in ``status/arguments.py``).

Management commands take the same JSON fields as the HTTP API (``--data '{...}'``) plus shortcuts for the
common ones (``--name``, ``--status``, ``--body``, ``--description``, ``--component ID[=STATUS]``). They write
through the owner connection directly and are audited as ``cli:<user>``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import getpass
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import orjson

from ledgermirror import http_server
from ledgermirror.clock import Clock, SystemClock
from ledgermirror.db.replicas import split_urls
from ledgermirror.exits import EXIT_USAGE
from ledgermirror.runtime import Prepared, check_reachable, exit_cleanly_on_sigterm, prepare
from ledgermirror.settings import Settings, SettingsError
from ledgermirror.status import audit, components_ops, defaults, incidents_ops, keys, maintenances_ops
from ledgermirror.status.app import create_status_app
from ledgermirror.status.arguments import OPTIONS
from ledgermirror.status.automation import Automation, Service
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import Conn, grant_read_access
from ledgermirror.status.errors import ManageError
from ledgermirror.status.probes import grpc_ready, http_ready
from ledgermirror.status.wire import from_ns

Action = Callable[..., Awaitable[Any]]
ACTIONS: dict[tuple[str, str], Action] = {
    ("component", "add"): components_ops.create_component,
    ("component", "update"): components_ops.update_component,
    ("group", "add"): components_ops.create_group,
    ("group", "update"): components_ops.update_group,
    ("incident", "open"): incidents_ops.open_incident,
    ("incident", "update"): incidents_ops.update_incident,
    ("incident", "resolve"): incidents_ops.resolve_incident,
    ("incident", "postmortem"): incidents_ops.write_postmortem,
    ("maintenance", "schedule"): maintenances_ops.schedule,
    ("maintenance", "update"): maintenances_ops.update_maintenance,
    ("maintenance", "cancel"): maintenances_ops.cancel,
}
"""The operation of each management command (its options: ``status/arguments.OPTIONS``)."""


def fields_from(args: argparse.Namespace, noun: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(args.data) if args.data else {}
    for name in ("name", "status", "body", "description"):
        value = getattr(args, name, None)
        if value is not None:
            data[name] = value
    if getattr(args, "component", None):
        if noun == "incident":
            data["components"] = dict(item.partition("=")[::2] for item in args.component)
        else:
            data["components"] = list(args.component)
    return data


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror status ...`` (``cli.COMMANDS``)."""
    try:
        status_settings = StatusSettings.from_env()
    except SettingsError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.status_command == "serve":
        status_settings = dataclasses.replace(
            status_settings,
            host=args.status_host or status_settings.host,
            port=args.status_port or status_settings.port,
        )
        print(
            f"ledgermirror status: starting on {status_settings.listen_url}/ (getting the database ready)",
            file=sys.stderr,
            flush=True,
        )
    prepared = prepare(settings)
    try:
        if args.status_command == "serve":
            return _serve(args, settings, status_settings, prepared)
        return asyncio.run(_manage(args, prepared.owner_url, settings))
    except ManageError as error:
        print(f"ledgermirror: {error.message}", file=sys.stderr)
        return 1
    finally:
        prepared.stop()


async def _manage(args: argparse.Namespace, owner_url: str, settings: Settings) -> int:
    conn = await asyncpg.connect(owner_url)
    try:
        return await execute(conn, args, settings)
    finally:
        await conn.close()


async def execute(conn: Conn, args: argparse.Namespace, settings: Settings, clock: Clock | None = None) -> int:
    """Run one management command on an owner connection (the tests call this directly, with their clock)."""
    now = from_ns((clock or SystemClock()).now_ns())
    actor = f"cli:{getpass.getuser()}"
    command = args.status_command
    if command == "key":
        if args.key_command == "create":
            key_id, token = await keys.create(conn, args.name, now, actor)
            print(f"{key_id}\t{token}")
        elif args.key_command == "revoke":
            await keys.revoke(conn, args.key_id, now, actor)
            print(f"revoked {args.key_id}")
        else:
            for info in await keys.list_keys(conn):
                state = "revoked " + info.revoked_at.isoformat() if info.revoked_at else "active"
                print(f"{info.id}\t{info.name}\t{info.created_at.isoformat()}\t{state}")
        return 0
    if command == "defaults":
        created = await defaults.ensure_defaults(conn, now, actor, shard=settings.shard, realm=settings.realm)
        print(f"created {len(created)} components")
        return 0
    if command == "audit":
        for entry in await audit.recent(conn, args.limit):
            print(orjson.dumps(entry, default=str).decode())
        return 0
    operation, takes_id = ACTIONS[(command, args.action)], OPTIONS[(command, args.action)].takes_id
    try:
        data = fields_from(args, command)
    except orjson.JSONDecodeError:
        print("ledgermirror: --data is not valid JSON", file=sys.stderr)
        return EXIT_USAGE
    if takes_id:
        await operation(conn, args.id, data, now, actor)
        print(args.id)
    else:
        print(await operation(conn, data, now, actor))
    return 0


def automation_of(status_settings: StatusSettings) -> Automation:
    """The evaluator as the settings configure it (thresholds, readiness probes)."""
    services: list[Service] = []
    rest_url, grpc_target = status_settings.rest_readiness_url, status_settings.grpc_target
    if rest_url is not None:
        services.append(
            Service("mirror:rest-api", "Mirror Node REST API", 1, functools.partial(http_ready, rest_url))
        )
    if grpc_target is not None:
        services.append(
            Service("mirror:grpc-api", "Mirror Node gRPC API", 2, functools.partial(grpc_ready, grpc_target))
        )
    return Automation(
        status_settings.rules,
        services,
        incidents=status_settings.auto_incidents,
        maintenance_minutes=status_settings.maintenance_minutes,
    )


def _serve(
    args: argparse.Namespace, settings: Settings, status_settings: StatusSettings, prepared: Prepared
) -> int:
    async def set_up() -> list[str]:
        conn = await asyncpg.connect(prepared.owner_url)
        try:
            await grant_read_access(conn, settings.api_role)
            now = from_ns(SystemClock().now_ns())
            return await defaults.ensure_on_first_start(
                conn, now, "serve:first-start", shard=settings.shard, realm=settings.realm
            )
        finally:
            await conn.close()

    created = asyncio.run(set_up())
    if created:
        print(f"ledgermirror status: new store, created {len(created)} default components", file=sys.stderr)
    read_url = split_urls(prepared.api_url)[-1]  # of a replica list, the last: the primary when listed
    check_reachable(read_url)
    app = create_status_app(
        status_settings,
        read_url,
        prepared.owner_url,
        max_idle_seconds=settings.db_max_idle_seconds,
        automation=automation_of(status_settings) if status_settings.automation else None,
    )
    exit_cleanly_on_sigterm()
    base = status_settings.listen_url
    print(
        f"Ledger Mirror status on {base}/ (JSON: {base}/api/v2/summary.json)",
        file=sys.stderr,
        flush=True,
    )
    http_server.run(
        http_server.bounded_config(app, settings, host=status_settings.host, port=status_settings.port)
    )
    return 0
