"""``ledgermirror`` imports a command's module only when that command runs: the command line itself (``--help``,
parsing) loads no database driver, server, SDK or generator, and every command has its module."""

from __future__ import annotations

import argparse
import importlib
import inspect
import subprocess
import sys

from ledgermirror.cli import COMMANDS, build_parser

HEAVY = (
    "asyncpg",
    "uvicorn",
    "starlette",
    "pgserver",
    "grpc",
    "hiero_sdk_python",
    "cryptography",
    "prometheus_client",
    "ledgermirror.api",
    "ledgermirror.db",
    "ledgermirror.runtime",
    "ledgermirror.conformance",
    "ledgermirror.dataset",
    "ledgermirror.simulator",
    "ledgermirror.commands",
)


def test_the_command_line_loads_nothing_a_command_needs_to_run() -> None:
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, ledgermirror.cli; ledgermirror.cli.build_parser(); print(*sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    loaded = sorted({name for name in listed for heavy in HEAVY if name == heavy or name.startswith(heavy + ".")})
    assert loaded == []


def test_every_command_has_a_module_that_runs_it() -> None:
    parser = build_parser()
    choices = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction)).choices
    assert sorted(choices) == sorted(COMMANDS)
    for name, module in COMMANDS.items():
        run = importlib.import_module(module).run
        assert list(inspect.signature(run).parameters) == ["args", "settings", "log_format"], name
