"""What the importer tells its operator: a status line on a terminal, structured records otherwise."""

from __future__ import annotations

import io
import logging
import time

import pytest

from ledgermirror.importer.progress import ImportStats, LogProgress, TerminalProgress, progress_for


def _stats() -> ImportStats:
    stats = ImportStats(files=30, items=6_000, rows=40_000)
    stats.started = time.perf_counter() - 2.0
    stats.last_name = "2022-07-13T08_46_11.304284003Z.rcd.gz"
    stats.last_consensus_end = time.time_ns() - 90 * 1_000_000_000
    return stats


def test_the_terminal_line_shows_rates_and_lag() -> None:
    out = io.StringIO()
    TerminalProgress(out).committed(_stats())
    line = out.getvalue()
    assert line.startswith("\r30 files 6000 tx")
    assert " files/s " in line and " tx/s " in line
    rate = float(line.split(" files/s")[0].rsplit(" ", 1)[-1])
    assert 10 < rate <= 15  # 30 files in a little over 2 s
    assert "lag 90s" in line or "lag 91s" in line


def test_logs_carry_the_figures(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ledgermirror.importer"):
        LogProgress().committed(_stats())
    (record,) = caplog.records
    assert record.getMessage() == "imported"
    assert record.__dict__["files"] == 30
    assert record.__dict__["transactions"] == 6_000
    assert record.__dict__["last_file"] == "2022-07-13T08_46_11.304284003Z.rcd.gz"
    assert 89 <= record.__dict__["lag_seconds"] <= 92
    for name in ("files_per_second", "transactions_per_second", "signature_seconds", "data_check_seconds"):
        assert name in record.__dict__


def test_a_terminal_gets_the_line_anything_else_the_logs() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(progress_for(Terminal()), TerminalProgress)
    assert isinstance(progress_for(io.StringIO()), LogProgress)
