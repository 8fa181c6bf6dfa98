"""The ``ledgermirror status ...`` command line: its commands and their options (``cli.build_parser`` adds them).

Light to import on purpose: ``ledgermirror --help`` reads it; what the commands do is in ``status/cli.py``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ledgermirror.status.model import (
    INCIDENT_STATES,
    MAINTENANCE_STATES,
    SETTABLE_COMPONENT_STATUSES,
    UNRESOLVED_INCIDENT_STATES,
)


@dataclass(frozen=True, slots=True)
class Options:
    """What one management command says about itself and which shortcut options apply to it."""

    help: str
    takes_id: bool = False
    """The command names what it changes (``update``, ``resolve``...): an ``id`` argument."""
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
        "change a component", takes_id=True, name=True, description=True, statuses=SETTABLE_COMPONENT_STATUSES
    ),
    ("group", "add"): Options(
        "add a group of components", name=True, description=True, component="a component of the group (repeat)"
    ),
    ("group", "update"): Options(
        "change a group",
        takes_id=True,
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
        takes_id=True,
        name=True,
        body=True,
        statuses=RESOLVED_STATES,
        component="an affected component and its new status (repeat)",
        metavar="ID[=STATUS]",
    ),
    ("incident", "resolve"): Options(
        "resolve an incident (its components go back to operational)", takes_id=True, body=True
    ),
    ("incident", "postmortem"): Options("publish the postmortem of a resolved incident", takes_id=True, body=True),
    ("maintenance", "schedule"): Options(
        "schedule a maintenance (give scheduled_for and scheduled_until in --data)",
        name=True,
        body=True,
        component="a component under maintenance (repeat)",
    ),
    ("maintenance", "update"): Options(
        "change a maintenance",
        takes_id=True,
        name=True,
        body=True,
        statuses=MAINTENANCE_STATES,
        component="a component under maintenance (repeat; replaces the set)",
    ),
    ("maintenance", "cancel"): Options("cancel a maintenance", takes_id=True, body=True),
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
    for (noun, verb), options in OPTIONS.items():
        if noun not in nouns:
            parser = verbs.add_parser(noun, help=f"manage {noun}s", description=f"Manage {noun}s.")
            nouns[noun] = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        action = nouns[noun].add_parser(
            verb, help=options.help, description=options.help[0].upper() + options.help[1:] + "."
        )
        if options.takes_id:
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
