"""``ledgermirror simulate`` as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_simulate_writes_a_network_and_reports_it(tmp_path: Path) -> None:
    out = tmp_path / "net"
    arguments = ["--out", str(out), "--nodes", "1", "--seconds", "4", "--tps", "5", "--seed", "2"]
    result = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "in 2 record files" in result.stdout
    truth = json.loads((out / "truth.json").read_text())
    assert truth["record_files"]["count"] == 2
    assert truth["network"]["nodes"] == [{"node_id": 0, "account": "0.0.3", "stake": 5 * 10**17}]
    folder = out / "recordstreams" / "record0.0.3"
    assert len(list(folder.glob("*.rcd.gz"))) == len(list(folder.glob("*.rcd_sig"))) == 2
    assert (out / "addressbook.bin").stat().st_size > 0
    assert (out / "keys" / "node0.pem").read_text().startswith("-----BEGIN PRIVATE KEY-----")


def test_simulate_writes_the_node_id_layout(tmp_path: Path) -> None:
    arguments = ["--out", str(tmp_path), "--nodes", "2", "--seconds", "2", "--tps", "5", "--layout", "node-id"]
    result = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["network"]["folders"] == ["simulated/0/0/record", "simulated/0/1/record"]
    for node in ("0", "1"):
        folder = tmp_path / "simulated" / "0" / node / "record"
        assert len(list(folder.glob("*.rcd.gz"))) == len(list(folder.glob("*.rcd_sig"))) == 1
        assert (folder / "sidecar").is_dir()
    assert not (tmp_path / "recordstreams").exists()


def test_simulate_refuses_a_bad_argument(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", "--out", str(tmp_path), "--tps", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "expected a positive integer" in result.stderr


def test_simulate_writes_mixed_record_versions(tmp_path: Path) -> None:
    arguments = [
        "--out",
        str(tmp_path),
        "--nodes",
        "1",
        "--seconds",
        "6",
        "--tps",
        "5",
        "--record-version",
        "mixed",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["network"]["record_version"] == "mixed"
    assert [(f["name"].split("Z", 1)[1], f["version"]) for f in truth["record_files"]["files"]] == [
        (".rcd", 2), (".rcd", 5), (".rcd.gz", 6)
    ]  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "ledgermirror", "simulate", "--out", str(tmp_path), "--record-version", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2
    assert "invalid choice: '4'" in refused.stderr
