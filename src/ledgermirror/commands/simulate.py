"""``ledgermirror simulate``: a deterministic simulated network's signed streams and ``truth.json``."""

from __future__ import annotations

import argparse

from ledgermirror.settings import Settings
from ledgermirror.simulator.run import simulate

FORMAT_NOTES = {
    "records": "",
    "blocks": "; written as wrapped record blocks under block/",
    "native": "; written as native blocks under block/",
    "cutover": "; the second half written as wrapped record blocks under block/",
}


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror simulate`` (``cli.COMMANDS``): its arguments only, no database."""
    summary = simulate(
        args.out,
        nodes=args.nodes,
        seconds=args.seconds,
        tps=args.tps,
        seed=args.seed,
        layout=args.layout,
        fmt=args.format,
        record_version=args.record_version,
        evm_contracts=args.evm_contracts,
    )
    print(
        f"simulated {summary.transactions} transactions in {summary.record_files} record files "
        f"({summary.sidecar_files} with a sidecar, {summary.bytes_written} bytes) into {summary.out} "
        f"in {summary.seconds_total:.1f} s (node keys {summary.seconds_keys:.1f} s)" + FORMAT_NOTES[args.format]
    )
    return 0
