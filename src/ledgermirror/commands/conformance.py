"""``ledgermirror conformance``: the reference's JSON spec tests against the in-process API."""

from __future__ import annotations

import argparse
import sys

from ledgermirror.conformance import expected, runner
from ledgermirror.exits import EXIT_USAGE
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror conformance`` (``cli.COMMANDS``): 0 when every check passes or fails as expected."""
    if not args.specs.is_dir():
        print(f"ledgermirror: no specs folder at {args.specs}", file=sys.stderr)
        return EXIT_USAGE
    report = runner.run(
        args.specs,
        only=args.only,
        expected_file=args.expected,
        out=sys.stdout,
        verbose=args.verbose,
        reference_pagination=args.reference_pagination,
    )
    if args.json is not None:
        runner.write_json(report, args.json)
    if args.update_expected:
        path = args.expected or expected.bundled_path()
        count = runner.update_expected(report, path, args.reason)
        print(f"wrote {count} expected failures to {path}")
        return 0
    return 0 if report.ok else 1
