"""Rates by window of transactions over an import: does the rate hold as the tables grow?

The progress callback samples, at every commit, the wall clock, the transactions imported, the importer's CPU
and PostgreSQL's (its process tree) and the load average; :func:`windows` cuts the samples into consecutive
windows of at least ``size`` transactions (the last one may be shorter), each with its wall rate and CPU per
transaction. CPU per transaction is the figure to compare on a shared machine; the wall rate moves with the
other jobs' load, given per window.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench._hostspeed import median_between

DEFAULT_WINDOW = 100_000


@dataclass(frozen=True, slots=True)
class Sample:
    wall: float
    items: int
    importer_cpu: float
    postgres_cpu: float
    load: float


class Sampler:
    """Samples taken when the pipeline commits (``postgres_cpu`` reads the server's CPU seconds,
    ``importer_cpu`` the importer's: the same figure as the whole run's, children included)."""

    def __init__(self, postgres_cpu: Callable[[], float], importer_cpu: Callable[[], float]) -> None:
        self.postgres_cpu = postgres_cpu
        self.importer_cpu = importer_cpu
        self.samples: list[Sample] = []

    def take(self, items: int) -> None:
        self.samples.append(
            Sample(time.perf_counter(), items, self.importer_cpu(), self.postgres_cpu(), os.getloadavg()[0])
        )


def windows(
    samples: list[Sample], size: int = DEFAULT_WINDOW, probes: Sequence[tuple[float, float]] = ()
) -> list[dict[str, Any]]:
    """Consecutive windows of at least ``size`` transactions between samples (the first starts at the first
    sample, taken before the import), each with the median of the host's speed ``probes`` that ended in it
    (``_hostspeed``; None when none did)."""
    result: list[dict[str, Any]] = []
    if len(samples) < 2:
        return result
    start = samples[0]
    for index, sample in enumerate(samples[1:], start=1):
        last = index == len(samples) - 1
        if sample.items - start.items < size and not last:
            continue
        items = sample.items - start.items
        if items <= 0:
            break
        seconds = sample.wall - start.wall
        result.append(
            {
                "from_transaction": start.items,
                "to_transaction": sample.items,
                "seconds": round(seconds, 2),
                "transactions_per_second": round(items / max(seconds, 1e-9), 1),
                "importer_us_per_transaction": round((sample.importer_cpu - start.importer_cpu) / items * 1e6, 1),
                "postgres_us_per_transaction": round((sample.postgres_cpu - start.postgres_cpu) / items * 1e6, 1),
                "load_average": [round(start.load, 2), round(sample.load, 2)],
                "host_probe_us": median_between(probes, start.wall, sample.wall),
            }
        )
        start = sample
    return result


def print_windows(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    print(
        "  by window: transactions, tx/s, CPU µs per transaction (importer + PostgreSQL), load average, the host's"
        " speed probe (µs, more is slower)"
    )
    for row in rows:
        total = row["importer_us_per_transaction"] + row["postgres_us_per_transaction"]
        probe = row["host_probe_us"]
        print(
            f"    {row['from_transaction']:>10,} .. {row['to_transaction']:>10,}  "
            f"{row['transactions_per_second']:>7,.0f} tx/s  "
            f"{row['importer_us_per_transaction']:>6.1f} + {row['postgres_us_per_transaction']:>6.1f} = "
            f"{total:>6.1f} µs  load {row['load_average'][0]:.1f} to {row['load_average'][1]:.1f}"
            + (f"  probe {probe:,.0f} µs" if probe is not None else "")
        )
