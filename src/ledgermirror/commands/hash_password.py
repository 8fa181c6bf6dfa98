"""``ledgermirror hash-password``: the PBKDF2 hash of an API user's password, for ``LEDGERMIRROR_USERS``."""

from __future__ import annotations

import argparse
import getpass
import sys

from ledgermirror.exits import EXIT_USAGE
from ledgermirror.settings import Settings
from ledgermirror.users import hash_password


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror hash-password`` (``cli.COMMANDS``): prompted on a terminal, else stdin's first line."""
    password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("ledgermirror: an empty password", file=sys.stderr)
        return EXIT_USAGE
    print(hash_password(password))
    return 0
