"""A real client against a real server: hiero-sdk-python bootstraps its consensus nodes from our address book.

The SDK's ``Network`` asks the mirror node for ``/api/v1/network/nodes?limit=100&order=desc`` and builds one node
per entry from ``node_account_id``, ``node_cert_hash``, ``public_key`` and the first service endpoint. Here it
asks a ``ledgermirror serve`` subprocess on 127.0.0.1; every address in the book is 127.0.0.1 too, and the SDK
opens no connection to the nodes it builds (gRPC channels are created on first use).
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hiero_sdk_python.client import network as sdk_network
from tests.support import Ledger

from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

BOOK = 1_700_000_000_000_000_001
NODES = {  # node id -> (account the SDK should use, RSA public key hex, certificate hash text)
    0: (
        "0.0.3",
        "308201a2300d06092a864886f70d01010105000382018f00" + "a0" * 8,
        hashlib.sha384(b"node 0").hexdigest(),
    ),
    1: (
        "0.0.4",
        "308201a2300d06092a864886f70d01010105000382018f00" + "a1" * 8,
        hashlib.sha384(b"node 1").hexdigest(),
    ),
    2: ("0.0.1005", "0x308201a2300d06092a864886f70d0101010500" + "a2" * 8, hashlib.sha384(b"node 2").hexdigest()),
}

SETUP: dict[str, Any] = {
    "addressbooks": [
        {"start_consensus_timestamp": 10, "file_id": 102, "end_consensus_timestamp": BOOK - 1},
        {"start_consensus_timestamp": 11, "file_id": 101},
        {"start_consensus_timestamp": BOOK, "file_id": 102},
    ],
    "addressbookentries": [
        {"consensus_timestamp": 10, "node_id": 0, "node_account_id": 99},  # an older book
        {"consensus_timestamp": 11, "node_id": 7, "node_account_id": 98},  # the other file
        *(
            {
                "consensus_timestamp": BOOK,
                "node_id": node,
                "node_account_id": node + 3,
                "public_key": public_key,
                "node_cert_hash": cert_hash.encode().hex(),  # stored as the ASCII text, as on mainnet
                "description": f"node {node}",
            }
            for node, (_, public_key, cert_hash) in NODES.items()
        ),
    ],
    "addressbookserviceendpoints": [
        {"consensus_timestamp": 10, "ip_address_v4": "127.0.0.1", "node_id": 0, "port": 40000},
        {"consensus_timestamp": 11, "ip_address_v4": "127.0.0.1", "node_id": 7, "port": 40001},
        {"consensus_timestamp": BOOK, "ip_address_v4": "127.0.0.1", "node_id": 0, "port": 50211},
        {"consensus_timestamp": BOOK, "ip_address_v4": "127.0.0.1", "node_id": 1, "port": 50299},
        {"consensus_timestamp": BOOK, "ip_address_v4": "127.0.0.1", "node_id": 1, "port": 50212},
        {"consensus_timestamp": BOOK, "ip_address_v4": "127.0.0.1", "node_id": 2, "port": 50213},
    ],
    "nodestakes": [{"consensus_timestamp": BOOK, "node_id": node, "stake": 10 + node} for node in NODES],
    "nodes": [{"node_id": 2, "account_id": 1005, "grpc_proxy_endpoint": None}],  # node.account_id wins
}

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str, process: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read() if process.stderr else ''}")
        try:
            with urllib.request.urlopen(base + "/health/readiness", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not become ready")


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A ``ledgermirror serve`` on 127.0.0.1 whose embedded database holds :data:`SETUP`."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    prepared = prepare(Settings(data_dir=tmp_path))
    try:
        Ledger(prepared.owner_url).load(SETUP)
    finally:
        prepared.stop()
    port = free_port()
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("LEDGERMIRROR_")},
        "LEDGERMIRROR_DATA_DIR": str(tmp_path),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ledgermirror",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--grpc-port",
            "0",
        ],
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


def test_sdk_builds_its_nodes_from_our_address_book(mirror: str, monkeypatch: pytest.MonkeyPatch) -> None:
    requested: list[str] = []
    real_get = sdk_network.requests.get

    def get_local_only(url: str, *args: Any, **kwargs: Any) -> Any:
        assert url.startswith(mirror + "/"), url  # never anything but our server on 127.0.0.1
        requested.append(url)
        return real_get(url, *args, **kwargs)

    monkeypatch.setattr(sdk_network.requests, "get", get_local_only)
    monkeypatch.setitem(sdk_network.Network.MIRROR_NODE_URLS, "ledgermirror", mirror)

    network = sdk_network.Network(network="ledgermirror")

    assert requested == [mirror + "/api/v1/network/nodes?limit=100&order=desc"]
    built = [
        (
            str(node._account_id),
            str(node._address),
            node._address_book._node_id,
            node._address_book._public_key,
            node._address_book._cert_hash,
            node._address_book._description,
            [str(endpoint) for endpoint in node._address_book._addresses],
        )
        for node in network.nodes
    ]
    assert built == [
        (
            "0.0.1005",
            "127.0.0.1:50213",
            2,
            NODES[2][1],
            bytes.fromhex(NODES[2][2]),
            "node 2",
            ["127.0.0.1:50213"],
        ),
        (
            "0.0.4",
            "127.0.0.1:50212",  # the first service endpoint: ordered by address, then port
            1,
            "0x" + NODES[1][1],
            bytes.fromhex(NODES[1][2]),
            "node 1",
            ["127.0.0.1:50212", "127.0.0.1:50299"],
        ),
        (
            "0.0.3",
            "127.0.0.1:50211",
            0,
            "0x" + NODES[0][1],
            bytes.fromhex(NODES[0][2]),
            "node 0",
            ["127.0.0.1:50211"],
        ),
    ]
    assert [str(node._account_id) for node in network._healthy_nodes] == ["0.0.1005", "0.0.4", "0.0.3"]
    assert network.current_node in network.nodes
