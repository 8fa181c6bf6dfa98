"""The JavaScript SDK's ``MirrorNodeContractCallQuery`` and ``MirrorNodeContractEstimateQuery`` (``@hashgraph/sdk``
from the npm registry, installed as tests/grpc_api/test_grpc_js_sdk.py installs it) against our server. For a
mirror at 127.0.0.1 the SDK sends contract calls to ``http://127.0.0.1:8545``, so the API is served on that port
for the test (skipped, saying so, when another program holds it)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from tests.api.test_contract_call import SETUP, word
from tests.grpc_api.test_grpc_js_sdk import installed_sdk
from tests.live_server import bounded_server
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

SCRIPT = Path(__file__).parent / "js" / "contract_call.js"
SDK_CONTRACT_PORT = 8545


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_sdk_mirror_contract_queries(database: Prepared, ledger: Ledger, api_settings: Settings) -> None:
    folder = installed_sdk()
    if not _port_is_free(SDK_CONTRACT_PORT):
        pytest.skip(f"port {SDK_CONTRACT_PORT} (where the SDK sends local contract calls) is taken")
    ledger.load(SETUP)
    app = create_app(api_settings, database.api_url)
    with bounded_server(app, api_settings, port=SDK_CONTRACT_PORT):
        env = {**os.environ, "NODE_PATH": str(folder / "node_modules")}
        done = subprocess.run(
            ["node", str(SCRIPT), "127.0.0.1:5600", "0.0.1001"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert answers["product"] == "0x" + word(4)
    assert answers["value"] == "0x" + word(49)
    assert 26_509 <= answers["estimate"] <= 26_509 * 1.2  # increment(): its gas used, then the reference's search
    assert answers["failure"] == "HTTP error! status: 400"
