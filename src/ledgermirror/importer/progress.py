"""What the importer tells its operator: a one-line status on a terminal, structured log records otherwise."""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from ledgermirror.importer.downloader import VerificationCost

_log = logging.getLogger("ledgermirror.importer")


@dataclass(slots=True)
class ImportStats:
    files: int = 0
    items: int = 0
    rows: int = 0
    tables: Counter[str] = field(default_factory=Counter)
    """Rows written by table (``rows`` is their sum)."""
    commits: int = 0
    write_seconds: float = 0.0
    cost: VerificationCost = field(default_factory=VerificationCost)
    started: float = field(default_factory=time.perf_counter)
    last_name: str | None = None
    last_consensus_end: int | None = None
    overlapped: int = 0
    """Transactions written by the background writer while the next was built (``LEDGERMIRROR_IMPORT_OVERLAP``)."""
    background_snapshots: int = 0
    """Balance snapshots the background writer took (``BalanceSnapshots.claim``)."""
    waited_reads: int = 0
    """Reads of row building that waited for the transaction being written to commit (``importer/overlap.py``)."""
    deferred_reads: int = 0
    """Files whose synthetic log addresses were completed after that commit instead of waiting for it."""
    background_write_seconds: float = 0.0
    """Wall seconds the background writer spent writing and committing."""
    write_wait_seconds: float = 0.0
    """Wall seconds the row builder waited for the background writer's commits (the part of the writes that
    the building of the next transaction did not hide)."""

    @property
    def elapsed(self) -> float:
        return max(time.perf_counter() - self.started, 1e-9)

    def lag_seconds(self) -> float | None:
        if self.last_consensus_end is None:
            return None
        return max(time.time() - self.last_consensus_end / 1e9, 0.0)

    def summary(self) -> dict[str, object]:
        cost = self.cost
        return {
            "files": self.files,
            "transactions": self.items,
            "rows": self.rows,
            "files_per_second": round(self.files / self.elapsed, 2),
            "transactions_per_second": round(self.items / self.elapsed, 1),
            "download_seconds": round(cost.download, 4),
            "signature_seconds": round(cost.signatures, 4),
            "data_check_seconds": round(cost.data, 4),
            "write_seconds": round(self.write_seconds, 4),
            "last_file": self.last_name,
            "lag_seconds": None if (lag := self.lag_seconds()) is None else round(lag, 1),
        }


class Progress(Protocol):
    def committed(self, stats: ImportStats) -> None: ...

    def waiting(self, stats: ImportStats, seconds: float) -> None: ...

    def refused(self, error: Exception, *, retrying: bool) -> None: ...

    def finished(self, stats: ImportStats) -> None: ...


class LogProgress:
    """One structured record per committed transaction (the JSON log format carries the fields)."""

    def committed(self, stats: ImportStats) -> None:
        _log.info("imported", extra=stats.summary())

    def waiting(self, stats: ImportStats, seconds: float) -> None:
        _log.debug("waiting for new files", extra={"seconds": round(seconds, 2), "last_file": stats.last_name})

    def refused(self, error: Exception, *, retrying: bool) -> None:
        _log.error("refused: %s", error, extra={"retrying": retrying})

    def finished(self, stats: ImportStats) -> None:
        _log.info("import stopped", extra=stats.summary())


class TerminalProgress:
    """A status line rewritten in place: files/s, transactions/s, lag behind the newest file imported."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr

    def _line(self, stats: ImportStats, note: str = "") -> str:
        lag = stats.lag_seconds()
        lag_text = "-" if lag is None else _duration(lag)
        return (
            f"\r{stats.files} files {stats.items} tx | {stats.files / stats.elapsed:.1f} files/s "
            f"{stats.items / stats.elapsed:.0f} tx/s | lag {lag_text}{note}\x1b[K"
        )

    def committed(self, stats: ImportStats) -> None:
        self.out.write(self._line(stats))
        self.out.flush()

    def waiting(self, stats: ImportStats, seconds: float) -> None:
        self.out.write(self._line(stats, f" | waiting {seconds:.0f}s"))
        self.out.flush()

    def refused(self, error: Exception, *, retrying: bool) -> None:
        self.out.write(f"\n{error}{' (retrying)' if retrying else ''}\n")
        self.out.flush()

    def finished(self, stats: ImportStats) -> None:
        self.out.write(self._line(stats) + "\n")
        self.out.flush()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.0f}d"


def progress_for(stream: TextIO) -> Progress:
    return TerminalProgress(stream) if stream.isatty() else LogProgress()
