"""``ledgermirror db migrate`` and ``ledgermirror db url``."""

from __future__ import annotations

import argparse

from ledgermirror.db.embedded import mask_password
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror db ...`` (``cli.COMMANDS``): apply the migrations, or print the owner URL (masked)."""
    prepared = prepare(settings, run_migrations=args.db_command == "migrate")
    try:
        if args.db_command == "url":
            print(mask_password(prepared.owner_url))
        else:
            print("migrations applied")
    finally:
        prepared.stop()
    return 0
