"""``ledgermirror import``: the importer (``importer/import_run.py``) on the database the settings name."""

from __future__ import annotations

import argparse

from ledgermirror.importer import import_run
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror import`` (``cli.COMMANDS``)."""
    prepared = prepare(settings)
    try:
        embedded = prepared.embedded
        restart = embedded.ensure_running if embedded is not None else None
        return import_run.run(args, prepared.owner_url, settings, restart)
    finally:
        prepared.stop()
