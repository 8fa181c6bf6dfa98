"""``bench/grpc``: topic subscriptions of the gRPC API while commits stream in, on loopback only.

1. A fresh embedded database (a temporary folder), migrated; ``--topics`` topic entities.
2. The gRPC server as ``ledgermirror serve`` runs it: a process of its own (``grpc_api.server.start_process``)
   on 127.0.0.1, its metrics in a multiprocess folder this process reads.
3. Per scenario, a client process (grpcio's asyncio client, one channel per 50 streams) opens the subscriptions
   (``one-topic``: ``--subscribers`` on topic 1; ``many-topics``: 10 on each of the first ``--subscribed``
   topics) from "now", half of them, then the rest; the server's RSS is read before, with half of them open
   and once they are all open: memory per idle subscriber, on average from none (what opening them cost in
   all, one-time costs such as the database connections the first reads open included) and over the second
   half (the cost of one more subscriber on a server already serving).
4. The writer, in this process, commits ``--rate`` topic messages per second spread round-robin over all
   ``--topics`` topics, ten commits a second, each as the importer's commit does it: ``topic_message`` rows by
   binary COPY (``db/write.copy_rows``) and ``notify_commit`` in the same transaction. It is the importer's
   write-and-announce step, not its parsing and verification of record files (``bench/import`` measures those).
   The wall-clock time after each commit is kept.
5. After ``--seconds`` the writer stops, the clients drain for two seconds and report every message they got
   (topic, sequence number, consensus time, wall-clock receipt time). Reported: messages delivered per second,
   latency from the commit's end to the client's receipt (median, p99, max), lost and repeated messages per
   subscriber (each must hold its topic's sequence numbers 1..n exactly once), the server's CPU (per second of
   load, and per 1,000 subscribers) and memory (per idle subscriber), PostgreSQL's CPU, the clients' CPU.

Bounded in time: ``--seconds`` per scenario, a minute at most for the set-up of each.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import multiprocessing
import multiprocessing.connection
import socket
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import psutil
from bench._procstat import postmaster_pids, usage
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.services import basic_types_pb2

from ledgermirror.conformance.loader import load_setup
from ledgermirror.db.commit_notify import notify_commit
from ledgermirror.db.write import copy_rows
from ledgermirror.grpc_api import server as grpc_server
from ledgermirror.metrics import exposition
from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings

NANOS = 1_000_000_000
SUBSCRIBE_TOPIC = "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic"
COMMITS_PER_SECOND = 10
STREAMS_PER_CHANNEL = 50
Receipt = tuple[int, int, int, int]
"""(topic, sequence number, consensus time, receipt time in ns)."""


@dataclasses.dataclass
class Scenario:
    name: str
    subscriptions: list[int]
    """The topic of each subscriber."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/grpc", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=("one-topic", "many-topics", "both"), default="both")
    parser.add_argument("--subscribers", type=int, default=1000, help="subscribers of the one topic (1000)")
    parser.add_argument("--subscribed", type=int, default=100, help="topics with 10 subscribers each (100)")
    parser.add_argument("--topics", type=int, default=100, help="topics written to (100)")
    parser.add_argument("--rate", type=int, default=1000, help="topic messages committed per second (1000)")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of load per scenario (20)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    scenarios = []
    if args.scenario in ("one-topic", "both"):
        scenarios.append(Scenario("one-topic", [1] * args.subscribers))
    if args.scenario in ("many-topics", "both"):
        scenarios.append(
            Scenario("many-topics", [topic for topic in range(1, args.subscribed + 1) for _ in range(10)])
        )
    with tempfile.TemporaryDirectory(prefix="ledgermirror-bench-grpc-") as folder:
        exposition.prepare_multiprocess(Path(folder) / "metrics")
        prepared = prepare(Settings(data_dir=Path(folder) / "db"))
        try:
            results = [asyncio.run(_scenario(args, prepared, folder, s)) for s in scenarios]
        finally:
            prepared.stop()
    for result in results:
        _print(result)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


async def _scenario(
    args: argparse.Namespace, prepared: Prepared, folder: str, scenario: Scenario
) -> dict[str, Any]:
    api_url = prepared.api_url
    conn = await asyncpg.connect(prepared.owner_url)
    await conn.execute("truncate topic_message")
    await conn.execute("delete from entity")
    await load_setup(
        conn, {"entities": [{"num": num, "type": "TOPIC"} for num in range(1, args.topics + 1)]}, spec="bench"
    )
    port = _free_port()
    settings = Settings(host="127.0.0.1", grpc_port=port, grpc_max_subscriptions_per_client=100_000)
    server = grpc_server.start_process(settings, api_url)
    assert server.process.pid is not None
    server_process = psutil.Process(server.process.pid)
    try:
        await asyncio.sleep(1.0)
        rss_before = server_process.memory_info().rss
        parent_end, child_end = multiprocessing.get_context("spawn").Pipe()
        clients = multiprocessing.get_context("spawn").Process(
            target=_clients_main, args=(f"127.0.0.1:{port}", scenario.subscriptions, child_end), daemon=True
        )
        clients.start()
        assert clients.pid is not None
        client_process = psutil.Process(clients.pid)
        half = len(scenario.subscriptions) // 2
        await _wait_for_subscriptions(half, 60.0)
        await asyncio.sleep(1.0)
        rss_half = server_process.memory_info().rss
        parent_end.send("more")
        opened = await _wait_for_subscriptions(len(scenario.subscriptions), 60.0)
        await asyncio.sleep(1.0)
        rss_idle = server_process.memory_info().rss
        server_cpu = server_process.cpu_times()
        client_cpu = client_process.cpu_times()
        pg_before = usage(postmaster_pids(folder)).cpu_seconds
        machine_cpu = psutil.cpu_times()
        commits, written = await _write(conn, args, args.seconds)
        machine_after = psutil.cpu_times()
        server_after = server_process.cpu_times()
        client_after = client_process.cpu_times()
        pg_after = usage(postmaster_pids(folder)).cpu_seconds
        await asyncio.sleep(2.0)
        parent_end.send("stop")
        receipts: list[list[Receipt]] = await asyncio.to_thread(parent_end.recv)
        clients.join(30)
    finally:
        server.stop()
        await conn.close()
    return _summarise(
        scenario,
        args,
        opened=opened,
        receipts=receipts,
        commits=commits,
        written=written,
        rss=(rss_before, rss_half, rss_idle),
        server_cpu=(server_after.user + server_after.system) - (server_cpu.user + server_cpu.system),
        client_cpu=(client_after.user + client_after.system) - (client_cpu.user + client_cpu.system),
        pg_cpu=pg_after - pg_before,
        machine_busy=_busy_share(machine_cpu, machine_after),
    )


def _busy_share(before: Any, after: Any) -> float:
    """The share of the machine's CPU time (every core) spent busy between two readings, by anything."""
    total = sum(after) - sum(before)
    idle = (after.idle + getattr(after, "iowait", 0)) - (before.idle + getattr(before, "iowait", 0))
    return round(1 - idle / total, 3) if total > 0 else 0.0


async def _wait_for_subscriptions(count: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    active = 0
    while time.monotonic() < deadline:
        text = exposition.render(None).decode()  # type: ignore[arg-type]
        for line in text.splitlines():
            if line.startswith("ledgermirror_grpc_subscriptions "):
                active = int(float(line.split()[1]))
        if active >= count:
            return active
        await asyncio.sleep(0.2)
    return active


async def _write(
    conn: asyncpg.Connection, args: argparse.Namespace, seconds: float
) -> tuple[dict[int, int], dict[int, int]]:
    """Commit ``rate`` messages a second for ``seconds``; returns each message's commit time (by consensus
    time) and the messages written per topic."""
    per_commit = max(args.rate // COMMITS_PER_SECOND, 1)
    sequences: dict[int, int] = defaultdict(int)
    committed: dict[int, int] = {}
    topic = 0
    started = time.monotonic()
    commit = 0
    while time.monotonic() - started < seconds:
        rows = []
        base = time.time_ns()
        for index in range(per_commit):
            topic = topic % args.topics + 1
            sequences[topic] += 1
            rows.append(
                {
                    "topic_id": topic,
                    "sequence_number": sequences[topic],
                    "consensus_timestamp": base + index,
                    "message": b"m" * 100,
                    "running_hash": b"h" * 48,
                    "running_hash_version": 3,
                    "chunk_num": None,
                    "chunk_total": None,
                    "payer_account_id": 2,
                    "valid_start_timestamp": base - NANOS,
                    "initial_transaction_id": None,
                }
            )
        async with conn.transaction():
            await copy_rows(conn, "topic_message", rows)
            await notify_commit(conn, rows[-1]["consensus_timestamp"])
        done = time.time_ns()
        for row in rows:
            committed[row["consensus_timestamp"]] = done
        commit += 1
        next_at = started + commit / COMMITS_PER_SECOND
        await asyncio.sleep(max(next_at - time.monotonic(), 0))
    return committed, dict(sequences)


def _summarise(
    scenario: Scenario,
    args: argparse.Namespace,
    *,
    opened: int,
    receipts: list[list[Receipt]],
    commits: dict[int, int],
    written: dict[int, int],
    rss: tuple[int, int, int],
    server_cpu: float,
    client_cpu: float,
    pg_cpu: float,
    machine_busy: float,
) -> dict[str, Any]:
    latencies: list[float] = []
    lost = repeated = 0
    delivered = 0
    for index, got in enumerate(receipts):
        topic = scenario.subscriptions[index]
        sequences = [sequence for _, sequence, _, _ in got]
        delivered += len(got)
        repeated += len(sequences) - len(set(sequences))
        lost += written.get(topic, 0) - len(set(sequences))
        latencies.extend((received - commits[stamp]) / 1e6 for _, _, stamp, received in got if stamp in commits)
    latencies.sort()
    subscribers = len(scenario.subscriptions)
    return {
        "scenario": scenario.name,
        "subscribers": subscribers,
        "subscriptions_open": opened,
        "topics_written": args.topics,
        "messages_committed_per_second": round(sum(written.values()) / args.seconds, 1),
        "messages_delivered": delivered,
        "messages_delivered_per_second": round(delivered / args.seconds, 1),
        "latency_ms_median": round(statistics.median(latencies), 2) if latencies else None,
        "latency_ms_p99": round(latencies[int(len(latencies) * 0.99) - 1], 2) if latencies else None,
        "latency_ms_max": round(latencies[-1], 2) if latencies else None,
        "lost": lost,
        "repeated": repeated,
        "server_rss_mb_before": round(rss[0] / 2**20, 1),
        "server_rss_mb_half_subscribed": round(rss[1] / 2**20, 1),
        "server_rss_mb_idle_subscribed": round(rss[2] / 2**20, 1),
        "server_kb_per_idle_subscriber": round((rss[2] - rss[0]) / 1024 / subscribers, 1),
        "server_kb_per_idle_subscriber_second_half": round(
            (rss[2] - rss[1]) / 1024 / max(subscribers - subscribers // 2, 1), 1
        ),
        "server_cpu_seconds_per_second": round(server_cpu / args.seconds, 3),
        "server_cpu_seconds_per_second_per_1000_subscribers": round(
            server_cpu / args.seconds * 1000 / subscribers, 3
        ),
        "postgres_cpu_seconds_per_second": round(pg_cpu / args.seconds, 3),
        "clients_cpu_seconds_per_second": round(client_cpu / args.seconds, 3),
        "machine_cores": psutil.cpu_count(),
        "machine_busy_share_during_load": machine_busy,
    }


def _print(result: dict[str, Any]) -> None:
    print(f"\n{result['scenario']}: {result['subscribers']} subscribers")
    for key, value in result.items():
        if key not in ("scenario", "subscribers"):
            print(f"  {key:55} {value}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The client process ----------------------------------------------------------------------------------------


def _clients_main(address: str, topics: list[int], pipe: multiprocessing.connection.Connection) -> None:
    host = address.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("bench/grpc only targets loopback")
    gc.disable()  # the receipts kept for the report are many objects: no collector pauses in the measure
    receipts = asyncio.run(_subscribe_all(address, topics, pipe))
    pipe.send(receipts)


async def _subscribe_all(
    address: str, topics: list[int], pipe: multiprocessing.connection.Connection
) -> list[list[Receipt]]:
    # a subchannel pool of its own per channel: one TCP connection each (else channels to one target share one)
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [
        grpc.aio.insecure_channel(address, options=options) for _ in range(0, len(topics), STREAMS_PER_CHANNEL)
    ]
    receipts: list[list[Receipt]] = [[] for _ in topics]

    async def read(index: int, topic: int) -> None:
        subscribe = channels[index // STREAMS_PER_CHANNEL].unary_stream(
            SUBSCRIBE_TOPIC,
            request_serializer=consensus.ConsensusTopicQuery.SerializeToString,
            response_deserializer=consensus.ConsensusTopicResponse.FromString,
        )
        got = receipts[index]
        call = subscribe(consensus.ConsensusTopicQuery(topicID=basic_types_pb2.TopicID(topicNum=topic)))
        try:
            async for response in call:
                stamp = response.consensusTimestamp
                got.append((topic, response.sequenceNumber, stamp.seconds * NANOS + stamp.nanos, time.time_ns()))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                print(f"subscriber {index}: {error.code().name} {error.details()}", file=sys.stderr)

    half = len(topics) // 2
    tasks = [asyncio.create_task(read(index, topic)) for index, topic in enumerate(topics[:half])]
    await asyncio.to_thread(pipe.recv)  # "more": the server's memory with half of them open was read
    tasks += [asyncio.create_task(read(index, topics[index])) for index in range(half, len(topics))]
    await asyncio.to_thread(pipe.recv)  # "stop"
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return receipts


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
