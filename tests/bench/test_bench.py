"""The benchmark tools themselves, on the small profile: generate, run (loopback only) and explain."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench._driver import NotLoopback, drive, loopback_target
from tests.cli.test_cli import free_port, wait_ready

from bench import _apicpu, _bucketget, _contract_call, _explain, _generate, _plans, _run
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


@pytest.mark.parametrize("url", ["http://10.0.0.1:80", "http://192.168.1.1", "http://8.8.8.8:5551"])
def test_the_driver_only_targets_loopback(url: str) -> None:
    with pytest.raises(NotLoopback):
        loopback_target(url)
    with pytest.raises(NotLoopback):
        asyncio.run(drive(url, lambda _: "/", seconds=0.1, connections=1))


def test_loopback_forms_are_accepted() -> None:
    assert loopback_target("http://127.0.0.1:5551") == ("127.0.0.1", 5551)
    assert loopback_target("http://localhost:8080")[1] == 8080


@pytest.fixture(scope="module")
def small_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bench")
    assert _generate.main(["--profile", "small", "--data-dir", str(folder)]) == 0
    assert _generate.main(["--profile", "small", "--data-dir", str(folder)]) == 0  # already loaded: no-op
    return folder


@pytest.fixture(scope="module")
def server(small_ledger: Path) -> Iterator[str]:
    """One ``ledgermirror serve`` for the module's runs (each only reads the small ledger; no response cache)."""
    port = free_port()
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(small_ledger), "LEDGERMIRROR_RESPONSE_CACHE_ENTRIES": "0"}
    env.pop("LEDGERMIRROR_DB_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "ledgermirror", "serve", "--port", str(port), "--grpc-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, process)
        yield base
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_run_reports_every_scenario(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every scenario answers without an error: 0.1 s each (and as long a warm-up), at least one request on each
    connection; the figures themselves are the benchmark's, not this test's."""
    assert _run.main(["--url", server, "--seconds", "0.1", "--connections", "2"]) == 0
    table = capsys.readouterr().out
    for name in _run.SCENARIOS.keys() - _run.SEPARATE_SERVICES:
        row = next(line for line in table.splitlines() if f"| {name} |" in line)
        cells = [cell.strip() for cell in row.split("|")]
        assert int(cells[4]) > 0, row  # requests per second
        assert cells[10] == "0", row  # no errors


def test_run_compare_prints_ratios(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        _run.main(
            [
                "--url",
                server,
                "--compare",
                server,
                "--scenario",
                "tokens-deep",
                "--seconds",
                "0.3",
                "--connections",
                "2",
            ]
        )
        == 0
    )
    assert "| tokens-deep |" in capsys.readouterr().out.split("ratios")[1]


def test_unknown_scenario(server: str) -> None:
    assert _run.main(["--url", server, "--scenario", "nope"]) == 2


def test_explain_fails_on_sequential_scans_of_large_tables(small_ledger: Path) -> None:
    prepared = prepare(Settings(), data_dir=small_ledger)
    try:
        strict = asyncio.run(
            _explain.run(prepared.api_url, prepared.owner_url, requests=1, min_rows=100, out=io.StringIO())
        )
        lenient = asyncio.run(
            _explain.run(prepared.api_url, prepared.owner_url, requests=1, min_rows=1e12, out=io.StringIO())
        )
    finally:
        prepared.stop()
    assert strict  # on a small ledger the planner rightly prefers sequential scans of small tables
    assert lenient == []


def test_status_service_scenario(small_ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    env = {**os.environ, "LEDGERMIRROR_DATA_DIR": str(small_ledger)}
    env.pop("LEDGERMIRROR_DB_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "ledgermirror", "status", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/api/v2/status.json", timeout=2):
                    break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.2)
        assert (
            _run.main(["--url", base, "--scenario", "status-service", "--seconds", "0.3", "--connections", "2"])
            == 0
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    row = next(line for line in capsys.readouterr().out.splitlines() if "| status-service |" in line)
    assert [cell.strip() for cell in row.split("|")][10] == "0"  # no errors


def test_run_sweeps_connection_counts(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--url", server, "--scenario", "blocks-list", "--seconds", "0.3"]
    assert _run.main([*argv, "--connections", "1", "--connections", "3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "| blocks-list |" in line]
    cells = [[cell.strip() for cell in row.split("|")] for row in rows]
    assert [row[3] for row in cells] == ["1", "3"]
    assert [row[15] for row in cells] == ["1", "3"]  # one worker holds every connection
    for row in cells:
        mean, little = row[5].split(" (")
        assert float(mean) > 0 and float(little.rstrip(")")) > 0
        assert float(row[6]) <= float(row[8]) <= float(row[9])  # p50 <= p99 <= p99.9


def test_apicpu_layers_account_for_the_application(small_ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--data-dir", str(small_ledger), "--scenario", "blocks-list", "--requests", "30", "--rounds", "1"]
    assert _apicpu.main([*argv, "--layers", "--functions", "3"]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| ") and "%" in line]
    layers = {row[1].strip(): float(row[3]) for row in rows}
    assert (
        "resources (plan and render)" in layers and "pool and driver (asyncpg: protocol, row decoding)" in layers
    )
    assert sum(int(row[2].strip().rstrip("%")) for row in rows) in range(95, 106)  # the shares add up
    assert len([line for line in out.splitlines() if "/req  " in line]) == 3


def test_plans_show_the_plan_a_prepared_statement_really_gets(small_ledger: Path, tmp_path: Path) -> None:
    """Each statement runs as a prepared statement under the API's session settings: the generic plan is
    planned once, and with row limits written as literals it reads no more pages than the custom plan."""
    prepared = prepare(Settings.from_env(), data_dir=small_ledger)
    try:
        detail = tmp_path / "plans.txt"
        url = prepared.owner_url
        argv = ["--ours", url, "--reference", url, "--scenario", "tokens-first-page", "--requests", "3"]
        assert _plans.main([*argv, "--repeat", "1", "--detail", str(detail)]) == 0
        lines = [line for line in detail.read_text().splitlines() if "ours" in line and "plan" in line]
        custom = [line for line in lines if "custom" in line]
        generic = [line for line in lines if "generic" in line]
        assert len(custom) == len(generic) == 3
        buffers = [int(line.split("buffers")[1].split()[0]) for line in lines]
        assert all(generic <= custom for custom, generic in zip(buffers[0::2], buffers[1::2], strict=True))
    finally:
        prepared.stop()


def test_grpc_bench_small(tmp_path: Path) -> None:
    """``bench/grpc`` on a small load: every subscriber gets each message of its topic once."""
    report = tmp_path / "grpc.json"
    subprocess.run(
        [
            sys.executable,
            "bench/grpc",
            "--scenario",
            "many-topics",
            "--subscribed",
            "3",
            "--topics",
            "5",
            "--rate",
            "50",
            "--seconds",
            "2",
            "--json",
            str(report),
        ],
        check=True,
        capture_output=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    (result,) = json.loads(report.read_text())
    assert result["subscribers"] == result["subscriptions_open"] == 30
    assert (result["lost"], result["repeated"]) == (0, 0)
    assert result["messages_delivered"] == 30 * 20  # 2 s at 50/s over 5 topics: 20 for each subscribed topic


def test_grpc_floor_bench_small(tmp_path: Path) -> None:
    """``bench/grpcfloor`` on a few streams: all reach the handler and stay open while the server is measured,
    with a server option added (``--option``) and the Python objects counted."""
    report = tmp_path / "floor.json"
    subprocess.run(
        [
            sys.executable,
            "bench/grpcfloor",
            "--streams",
            "20",
            "--per-channel",
            "10",
            "--option",
            "grpc.enable_channelz=0",
            "--tracemalloc",
            "--json",
            str(report),
        ],
        check=True,
        capture_output=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    result = json.loads(report.read_text())
    assert result["streams_open"] == 20
    assert result["more_options"] == ["grpc.enable_channelz=0"]
    assert result["server_rss_mb_streams_open"] >= result["server_rss_mb_before"]
    assert result["python_kb_per_idle_stream"] > 0


def _contract_call_table(out: str) -> dict[str, list[float]]:
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in {"balanceOf", "loop", "create"}:
            rows[parts[0]] = [float(part) for part in parts[1:]]
    return rows


def test_contract_call_bench_on_the_generated_data_set(
    small_ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The data set's first ERC-20 (its creator's balance checked against its storage before measuring) and
    CallTarget, then two GET routes while four clients call the loop."""
    argv = ["--data-dir", str(small_ledger), "--calls", "4", "--rounds", "1", "--with-load", "--seconds", "0.5"]
    assert _contract_call.main(argv) == 0
    out = capsys.readouterr().out
    table = _contract_call_table(out)
    assert set(table) == {"balanceOf", "loop", "create"}
    assert all(len(row) == 4 and row[3] > 0 for row in table.values())  # API, EVM, PostgreSQL ms CPU, calls/s
    assert table["loop"][1] > table["balanceOf"][1]  # the EVM's work: 10,000 iterations against one read
    holder = next(line for line in out.splitlines() if line.startswith("ERC-20 "))
    assert int(holder.split(" of ")[1].split(";")[0]) > 0
    assert "while 4 clients call loop(10000)" in out
    assert "GET /api/v1/blocks?limit=1: " in out and "GET /api/v1/accounts/0.0." in out


def _run_bucketget(*arguments: str, timeout: float) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "bench/bucketget", *arguments]
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout, cwd=root)


def test_bucketget_measures_every_way_of_reading(tmp_path: Path) -> None:
    """``bench/bucketget`` against a real ``weed mini``: every way reads every object whole (checked by the bench
    itself), and each row reports the time and CPU it took; a bad argument is refused."""
    report = tmp_path / "gets.json"
    done = _run_bucketget("--objects", "20", "--size", "3000", "--rounds", "1", "--json", str(report), timeout=180)
    if done.returncode != 0 and "ServerUnavailable" in done.stderr:
        pytest.skip(f"no S3 server: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    rows = json.loads(report.read_text())
    assert [row["way"] for row in rows] == list(_bucketget.WAYS)
    assert all(row["wall_us_per_get"] > 0 and row["cpu_us_per_get"] > 0 and row["threads"] >= 1 for row in rows)
    assert "two-awaits" in done.stdout
    refused = _run_bucketget("--objects", "0", timeout=60)
    assert refused.returncode == 2
    assert "at least 1" in refused.stderr
