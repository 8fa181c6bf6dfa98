"""The JavaScript SDK (``@hashgraph/sdk`` from the npm registry, on the machine's Node.js) against our server:
``AddressBookQuery`` reads the address book, ``TopicMessageQuery`` reads a topic's history and then the
messages written while it listens. The SDK is installed once into ``.cache/js-sdk/`` (ignored by git); the test
skips, saying why, only when Node.js or npm is missing or the registry cannot be reached."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.grpc_api.conftest import TOPIC, ServerThread, Topics
from tests.grpc_api.test_grpc_network import add_book, add_entry
from tests.npm_packages import installed

SDK_VERSION = "2.81.0"
SCRIPT = Path(__file__).parent / "js" / "mirror_client.js"


def installed_sdk() -> Path:
    """The folder whose ``node_modules`` holds the pinned SDK, installing it on first use."""
    return installed("js-sdk", "@hashgraph/sdk", SDK_VERSION, timeout=900)


def test_javascript_sdk_reads_the_book_and_a_topic(grpc_server: ServerThread, topics: Topics) -> None:
    folder = installed_sdk()
    add_book(topics.ledger)
    add_entry(topics.ledger, 0, description="node 0", endpoints=(("127.0.0.1", 50211, ""),))
    add_entry(topics.ledger, 1, description="node 1", endpoints=(("127.0.0.2", 50211, ""),))
    history = topics.messages(3)
    live = topics.message_rows(2, at=time.time_ns() + 1_000_000_000)
    env = {**os.environ, "NODE_PATH": str(folder / "node_modules")}
    node = subprocess.Popen(
        ["node", str(SCRIPT), grpc_server.address, f"0.0.{TOPIC}", str(len(history) + len(live))],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: list[dict[str, Any]] = []
    try:
        assert node.stdout is not None
        for line in node.stdout:
            events.append(json.loads(line))
            if [event["kind"] for event in events].count("message") == len(history):
                topics.insert_later(live, 0.1)  # the history has arrived: now the live messages
            if events[-1]["kind"] in ("complete", "error"):
                break
        node.wait(timeout=60)
    finally:
        if node.poll() is None:
            node.kill()
        stderr = node.stderr.read() if node.stderr else ""
        for pipe in (node.stdout, node.stderr):
            if pipe is not None:
                pipe.close()
    assert events[-1]["kind"] == "complete", (events, stderr)
    book = events[0]
    assert book["kind"] == "book"
    assert [(entry["nodeId"], entry["accountId"], entry["description"]) for entry in book["nodes"]] == [
        (0, "0.0.3", "node 0"),
        (1, "0.0.4", "node 1"),
    ]
    assert [entry["endpoints"] for entry in book["nodes"]] == [["127.0.0.1:50211"], ["127.0.0.2:50211"]]
    messages = [event for event in events if event["kind"] == "message"]
    assert [message["sequence"] for message in messages] == [1, 2, 3, 4, 5]
    assert [message["contents"] for message in messages] == [row["message"].decode() for row in history + live]
    assert [int(message["seconds"]) * 1_000_000_000 + message["nanos"] for message in messages] == [
        row["consensus_timestamp"] for row in history + live
    ]
