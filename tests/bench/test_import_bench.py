"""``bench/import`` on a tiny simulated stream: every figure of the report is there and agrees with the stream."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from bench import _import


def test_import_benchmark_reports_sane_figures(tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    arguments = ["--seconds", "6", "--tps", "15", "--nodes", "1", "--seed", "3", "--no-fsync"]
    arguments += ["--data-dir", str(tmp_path / "db"), "--json", str(report_file), "--timeout", "300"]
    arguments += ["--files-per-transaction", "1", "--window", "1"]
    assert _import.main(arguments) == 0
    report = json.loads(report_file.read_text())

    stream = report["stream"]
    imported = report["import"]
    assert stream["simulate_seconds"] > 0
    assert imported["completed"] is True
    assert imported["files"] == stream["record_files"] == 3
    assert imported["transactions"] == stream["transactions"] > 0
    by_table = report["rows_by_table"]
    assert by_table["transaction"] == imported["transactions"]
    assert by_table["record_file"] == imported["files"]
    assert by_table["crypto_transfer"] > 0 and by_table["entity"] > 0
    assert imported["rows_in_tables"] == sum(by_table.values())
    assert 0 < imported["rows_written"] <= imported["rows_in_tables"] * 2
    wall = imported["wall_seconds"]
    assert imported["transactions_per_second"] == pytest.approx(imported["transactions"] / wall, rel=0.01)
    assert imported["rows_per_second"] == pytest.approx(imported["rows_in_tables"] / wall, rel=0.01)

    cpu = report["cpu"]
    assert cpu["importer_seconds"] > 0 and cpu["postgres_seconds"] > 0
    parts = cpu["importer_us_per_transaction"] + cpu["postgres_us_per_transaction"]
    assert abs(cpu["total_us_per_transaction"] - parts) <= 0.2
    per_transaction = cpu["importer_seconds"] / imported["transactions"] * 1e6
    assert cpu["importer_us_per_transaction"] == pytest.approx(per_transaction, rel=0.01)
    memory = report["memory"]
    assert 20 * 2**20 < memory["importer_rss_before_bytes"] <= memory["importer_peak_rss_bytes"] < 4 * 2**30

    stages = report["stages_seconds"]
    assert set(stages) == {"download", "signatures", "data_checks", "rows", "database_writes"}
    assert all(seconds > 0 for seconds in stages.values()), stages
    assert sum(seconds for name, seconds in stages.items() if name != "download") <= wall

    copy = report["copy_limit"]
    assert copy["rows"] == imported["rows_in_tables"]
    assert set(copy["by_table_seconds"]) == set(by_table)
    assert 0 < copy["copy_seconds"] < wall * 10
    ratio = imported["rows_per_second"] / copy["rows_per_second"]
    assert copy["import_to_copy_ratio"] == pytest.approx(ratio, rel=0.01)
    assert copy["copy_cpu_us_per_row"] > 0 and copy["import_cpu_us_per_row"] > 0
    by_cpu = copy["copy_cpu_us_per_row"] / copy["import_cpu_us_per_row"]
    assert copy["import_to_copy_ratio_by_cpu"] == pytest.approx(by_cpu, rel=0.01)
    cpu_per_row = (cpu["importer_seconds"] + cpu["postgres_seconds"]) / imported["rows_in_tables"] * 1e6
    assert copy["import_cpu_us_per_row"] == pytest.approx(cpu_per_row, rel=0.01)

    machine = report["machine"]
    assert machine["cpus"] >= 1 and len(machine["load_average_before"]) == len(machine["load_average_after"]) == 3

    targets = report["targets"]
    assert targets["sustained_tps_met"] == (imported["transactions_per_second"] >= 10_000)
    assert targets["day_at_100_tps_hours"] > 0

    _check_windows(report)


def _check_windows(report: dict[str, Any]) -> None:
    """The rates by window cover the import, window after window, and the last one gives the targets' figures."""
    targets, transactions = report["targets"], report["import"]["transactions"]
    by_window = report["windows"]
    assert len(by_window) == report["import"]["commits"]  # a commit per file, a window of one transaction
    assert by_window[0]["from_transaction"] == 0 and by_window[-1]["to_transaction"] == transactions
    for before, after in itertools.pairwise(by_window):
        assert before["to_transaction"] == after["from_transaction"]
    assert all(row["importer_us_per_transaction"] > 0 and row["seconds"] > 0 for row in by_window)
    assert targets["last_window_tps"] == by_window[-1]["transactions_per_second"]
    assert targets["last_window_tps_met"] == (targets["last_window_tps"] >= 3000)
    last_cpu = by_window[-1]["importer_us_per_transaction"] + by_window[-1]["postgres_us_per_transaction"]
    assert targets["last_window_cpu_bound_tps"] == pytest.approx(1e6 / last_cpu, rel=0.01)


def test_an_existing_stream_and_a_database_that_is_not_fresh(tmp_path: Path) -> None:
    stream, db = tmp_path / "stream", tmp_path / "db"
    _import.simulate(stream, seconds=2, tps=5, nodes=1, seed=4, timeout=120)
    common = ["--stream", str(stream), "--data-dir", str(db), "--no-fsync", "--no-copy-limit"]
    report_file = tmp_path / "report.json"
    assert _import.main([*common, "--json", str(report_file)]) == 0
    report = json.loads(report_file.read_text())
    assert report["stream"]["simulate_seconds"] is None
    assert "copy_limit" not in report
    assert report["import"]["transactions"] == report["stream"]["transactions"]
    with pytest.raises(SystemExit, match="fresh"):
        _import.main(common)
