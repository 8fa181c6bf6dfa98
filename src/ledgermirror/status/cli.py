"""``ledgermirror status ...``: serve the status service, manage API keys, and every management action.

Management commands take the same JSON fields as the HTTP API (``--data '{...}'``) plus shortcuts for the
common ones (``--name``, ``--status``, ``--body``, ``--description``, ``--component ID[=STATUS]``). They write
through the owner connection directly and are audited as ``cli:<user>``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import getpass
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson

from ledgermirror.clock import Clock, SystemClock
from ledgermirror.runtime import Prepared, check_reachable, exit_cleanly_on_sigterm, prepare
from ledgermirror.settings import Settings, SettingsError
from ledgermirror.status import audit, components_ops, defaults, incidents_ops, keys, maintenances_ops
from ledgermirror.status.config import StatusSettings
from ledgermirror.status.db import Conn, grant_read_access
from ledgermirror.status.errors import ManageError
from ledgermirror.status.model import (
    INCIDENT_STATES,
    MAINTENANCE_STATES,
    SETTABLE_COMPONENT_STATUSES,
    UNRESOLVED_INCIDENT_STATES,
)
from ledgermirror.status.wire import from_ns

Action = Callable[..., Awaitable[Any]]
# (noun, verb) -> (operation, takes an id)
ACTIONS: dict[tuple[str, str], tuple[Action, bool]] = {
    ("component", "add"): (components_ops.create_component, False),
    ("component", "update"): (components_ops.update_component, True),
    ("group", "add"): (components_ops.create_group, False),
    ("group", "update"): (components_ops.update_group, True),
    ("incident", "open"): (incidents_ops.open_incident, False),
    ("incident", "update"): (incidents_ops.update_incident, True),
    ("incident", "resolve"): (incidents_ops.resolve_incident, True),
    ("incident", "postmortem"): (incidents_ops.write_postmortem, True),
    ("maintenance", "schedule"): (maintenances_ops.schedule, False),
    ("maintenance", "update"): (maintenances_ops.update_maintenance, True),
    ("maintenance", "cancel"): (maintenances_ops.cancel, True),
}


@dataclass(frozen=True, slots=True)
class Options:
    """What one management command says about itself and which shortcut options apply to it."""

    help: str
    name: bool = False
    description: bool = False
    body: bool = False
    statuses: tuple[str, ...] = ()
    component: str = ""
    """``""``: no ``--component``; otherwise its help (``ID`` or ``ID[=STATUS]``, see ``metavar``)."""
    metavar: str = "ID"


RESOLVED_STATES = tuple(state for state in INCIDENT_STATES if state != "postmortem")
OPTIONS: dict[tuple[str, str], Options] = {
    ("component", "add"): Options(
        "add a component", name=True, description=True, statuses=SETTABLE_COMPONENT_STATUSES
    ),
    ("component", "update"): Options(
        "change a component", name=True, description=True, statuses=SETTABLE_COMPONENT_STATUSES
    ),
    ("group", "add"): Options(
        "add a group of components", name=True, description=True, component="a component of the group (repeat)"
    ),
    ("group", "update"): Options(
        "change a group",
        name=True,
        description=True,
        component="a component of the group (repeat; replaces the set)",
    ),
    ("incident", "open"): Options(
        "open an incident",
        name=True,
        body=True,
        statuses=UNRESOLVED_INCIDENT_STATES,
        component="an affected component and its new status (repeat)",
        metavar="ID[=STATUS]",
    ),
    ("incident", "update"): Options(
        "post an update to an incident",
        name=True,
        body=True,
        statuses=RESOLVED_STATES,
        component="an affected component and its new status (repeat)",
        metavar="ID[=STATUS]",
    ),
    ("incident", "resolve"): Options("resolve an incident (its components go back to operational)", body=True),
    ("incident", "postmortem"): Options("publish the postmortem of a resolved incident", body=True),
    ("maintenance", "schedule"): Options(
        "schedule a maintenance (give scheduled_for and scheduled_until in --data)",
        name=True,
        body=True,
        component="a component under maintenance (repeat)",
    ),
    ("maintenance", "update"): Options(
        "change a maintenance",
        name=True,
        body=True,
        statuses=MAINTENANCE_STATES,
        component="a component under maintenance (repeat; replaces the set)",
    ),
    ("maintenance", "cancel"): Options("cancel a maintenance", body=True),
}


def register(commands: Any) -> None:
    """Add the ``status`` command group to the main parser's subcommands."""
    status = commands.add_parser("status", help="the status service", description="The status service (/api/v2).")
    verbs = status.add_subparsers(dest="status_command", required=True, metavar="STATUS_COMMAND")
    serve = verbs.add_parser("serve", help="run the status service", description="Serve /api/v2 and /manage/v1.")
    serve.add_argument("--host", dest="status_host", default=None, help="address (default 127.0.0.1)")
    serve.add_argument("--port", dest="status_port", type=int, default=None, help="port (default 5552)")
    key = verbs.add_parser("key", help="management API keys", description="Create, revoke and list API keys.")
    key_verbs = key.add_subparsers(dest="key_command", required=True, metavar="KEY_COMMAND")
    key_verbs.add_parser(
        "create", help="create a key (printed once)", description="Create a management API key; printed once."
    ).add_argument("name", help="a name for the key, to tell keys apart (e.g. who or what uses it)")
    key_verbs.add_parser("revoke", help="revoke a key").add_argument(
        "key_id", help="the key's id (the part after lmst_, as key list shows)"
    )
    key_verbs.add_parser("list", help="list keys")
    verbs.add_parser("defaults", help="create the default components (idempotent)")
    verbs.add_parser("audit", help="print the most recent audit log entries").add_argument(
        "--limit", type=int, default=50
    )
    nouns: dict[str, Any] = {}
    for noun, verb in ACTIONS:
        if noun not in nouns:
            parser = verbs.add_parser(noun, help=f"manage {noun}s", description=f"Manage {noun}s.")
            nouns[noun] = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        options = OPTIONS[(noun, verb)]
        action = nouns[noun].add_parser(
            verb, help=options.help, description=options.help[0].upper() + options.help[1:] + "."
        )
        if ACTIONS[(noun, verb)][1]:
            action.add_argument("id", help=f"the {noun}'s id")
        _field_options(action, options)


def _field_options(parser: argparse.ArgumentParser, options: Options) -> None:
    parser.add_argument("--data", default=None, help="a JSON object of fields (as the HTTP API takes)")
    if options.name:
        parser.add_argument("--name", help="the name shown on the page")
    if options.statuses:
        parser.add_argument(
            "--status", choices=options.statuses, metavar="STATUS", help="one of: " + ", ".join(options.statuses)
        )
    if options.body:
        parser.add_argument("--body", help="the text of the update shown on the page")
    if options.description:
        parser.add_argument("--description", help="a description shown under the name")
    if options.component:
        parser.add_argument(
            "--component", action="append", default=None, metavar=options.metavar, help=options.component
        )


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


def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        status_settings = StatusSettings.from_env()
    except SettingsError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return 2
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
    operation, takes_id = ACTIONS[(command, args.action)]
    try:
        data = fields_from(args, command)
    except orjson.JSONDecodeError:
        print("ledgermirror: --data is not valid JSON", file=sys.stderr)
        return 2
    if takes_id:
        await operation(conn, args.id, data, now, actor)
        print(args.id)
    else:
        print(await operation(conn, data, now, actor))
    return 0


def _serve(
    args: argparse.Namespace, settings: Settings, status_settings: StatusSettings, prepared: Prepared
) -> int:
    from ledgermirror import http_server
    from ledgermirror.status.app import create_status_app

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
    check_reachable(prepared.api_url)
    app = create_status_app(
        status_settings, prepared.api_url, prepared.owner_url, max_idle_seconds=settings.db_max_idle_seconds
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
