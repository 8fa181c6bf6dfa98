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
        return import_run.run(
            args, prepared.owner_url, synthetic_log_evm_lookup=settings.import_synthetic_log_evm_lookup
        )
    finally:
        prepared.stop()
