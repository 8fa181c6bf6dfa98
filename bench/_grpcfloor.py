"""``bench/grpcfloor``: the memory floor of an idle server-streaming call on grpcio's asyncio server.

What a subscriber of ``subscribeTopic`` costs the server before it receives anything, without our code: a
minimal grpcio asyncio server in a process of its own (the same grpcio, the method's name and request type,
the options of ``grpc_api.server.server_options`` unless ``--options default``) whose handler only waits
forever, and ``--streams`` idle calls from a client in another process (grpcio asyncio, 50 streams per
connection, as ``bench/grpc`` opens them: half, then the rest). Reported: the server's RSS before, with half
and with every stream open, and the difference per stream (on average, and over the second half); with
``--tracemalloc``, the Python objects' share of it. ``--option NAME=INT`` adds or replaces a server option
(to measure what one costs), ``--per-channel`` changes the streams per connection.

``--handler`` picks how the handler is written: ``write`` (a coroutine that would write with
``context.write``: ours), ``generator`` (an async generator, grpcio's other style) or ``sleep`` (a coroutine
waiting on ``asyncio.sleep``, no future of ours). ``--trim`` calls glibc's ``malloc_trim(0)`` once the streams
are open, before the second reading; ``MALLOC_ARENA_MAX`` and the like reach the server from the environment.

Loopback only, bounded: a minute at most to open the streams.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import dataclasses
import gc
import json
import multiprocessing
import multiprocessing.connection
import multiprocessing.sharedctypes
import socket
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import psutil
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.services import basic_types_pb2

from ledgermirror.grpc_api import server as grpc_server
from ledgermirror.grpc_api import wire
from ledgermirror.settings import Settings

SUBSCRIBE_TOPIC = f"/{wire.CONSENSUS_SERVICE}/{wire.SUBSCRIBE_TOPIC}"
STREAMS_PER_CHANNEL = 50
OPEN_SECONDS = 60.0


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    port: int
    handler: str
    options: list[tuple[str, int]]
    trace: bool


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/grpcfloor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000, help="idle streams to open (1000)")
    parser.add_argument("--handler", choices=("write", "generator", "sleep"), default="write")
    parser.add_argument("--options", choices=("ours", "default"), default="ours", help="server options (ours)")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=INT", help="one more server option (repeatable)"
    )
    parser.add_argument("--per-channel", type=int, default=STREAMS_PER_CHANNEL, help="streams per connection (50)")
    parser.add_argument(
        "--trim", action="store_true", help="malloc_trim(0) in the server once the streams are open"
    )
    parser.add_argument("--tracemalloc", action="store_true", help="also count the Python objects per stream")
    parser.add_argument("--json", type=Path, default=None, help="also write the result as JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = measure(args)
    for key, value in result.items():
        print(f"  {key:40} {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    spawn = multiprocessing.get_context("spawn")
    port = _free_port()
    opened = spawn.Value("i", 0)
    ours, theirs = spawn.Pipe()
    server = spawn.Process(
        target=_server_main,
        args=(ServerSpec(port, args.handler, _options(args), args.tracemalloc), opened, theirs),
        daemon=True,
    )
    server.start()
    try:
        if ours.recv() != "listening":
            raise SystemExit("the server did not start")
        assert server.pid is not None
        process = psutil.Process(server.pid)
        time.sleep(1.0)
        rss_before = process.memory_info().rss
        stop_clients, clients_end = spawn.Pipe()
        clients = spawn.Process(
            target=_clients_main, args=(port, args.streams, args.per_channel, clients_end), daemon=True
        )
        clients.start()
        half = args.streams // 2
        _wait_for(opened, half)
        rss_half = process.memory_info().rss
        stop_clients.send("more")
        _wait_for(opened, args.streams)
        ours.send(("settled", args.trim))
        python_bytes = ours.recv()
        rss_open = process.memory_info().rss
        threads = process.num_threads()
        stop_clients.send("stop")
        clients.join(30)
    finally:
        ours.send(("stop", False))
        server.join(10)
        if server.is_alive():
            server.kill()
    streams = opened.value
    result: dict[str, Any] = {
        "grpcio": grpc.__version__,
        "handler": args.handler,
        "options": args.options,
        "more_options": args.option,
        "streams_per_connection": args.per_channel,
        "malloc_trim": args.trim,
        "streams_open": streams,
        "server_threads": threads,
        "server_rss_mb_before": round(rss_before / 2**20, 1),
        "server_rss_mb_half_open": round(rss_half / 2**20, 1),
        "server_rss_mb_streams_open": round(rss_open / 2**20, 1),
        "server_kb_per_idle_stream": round((rss_open - rss_before) / 1024 / max(streams, 1), 1),
        "server_kb_per_idle_stream_second_half": round(
            (rss_open - rss_half) / 1024 / max(args.streams - half, 1), 1
        ),
    }
    if python_bytes is not None:
        result["python_kb_per_idle_stream"] = round(python_bytes / 1024 / max(streams, 1), 1)
    return result


def _wait_for(opened: Any, streams: int) -> None:
    """Until ``streams`` calls reached the handler (a minute at most), then a second for the rest to settle."""
    deadline = time.monotonic() + OPEN_SECONDS
    while opened.value < streams and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)


def _options(args: argparse.Namespace) -> list[tuple[str, int]]:
    chosen = grpc_server.server_options(Settings()) if args.options == "ours" else [("grpc.so_reuseport", 0)]
    for option in args.option:
        name, _, value = option.partition("=")
        chosen = [(key, old) for key, old in chosen if key != name]
        chosen.append((name, int(value)))
    return chosen


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The server process ----------------------------------------------------------------------------------------


def _server_main(spec: ServerSpec, opened: Any, pipe: multiprocessing.connection.Connection) -> None:
    asyncio.run(_serve(spec, opened, pipe))


async def _serve(spec: ServerSpec, opened: Any, pipe: multiprocessing.connection.Connection) -> None:
    async def wait_write(request: Any, context: Any) -> None:
        opened.value += 1
        await asyncio.get_running_loop().create_future()  # never done: an idle subscription

    async def wait_sleep(request: Any, context: Any) -> None:
        opened.value += 1
        await asyncio.sleep(3600)

    async def wait_generator(request: Any, context: Any) -> AsyncIterator[bytes]:
        opened.value += 1
        await asyncio.get_running_loop().create_future()
        yield b""

    behaviour = {"write": wait_write, "sleep": wait_sleep, "generator": wait_generator}[spec.handler]
    server = grpc.aio.server(options=spec.options)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                wire.CONSENSUS_SERVICE,
                {
                    wire.SUBSCRIBE_TOPIC: grpc.unary_stream_rpc_method_handler(
                        behaviour,
                        request_deserializer=consensus.ConsensusTopicQuery.FromString,
                        response_serializer=None,
                    )
                },
            ),
        )
    )
    server.add_insecure_port(f"127.0.0.1:{spec.port}")
    await server.start()
    gc.freeze()
    if spec.trace:
        tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0] if spec.trace else 0
    pipe.send("listening")
    while True:
        command, trim = await asyncio.to_thread(pipe.recv)
        if command == "stop":
            break
        if trim:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        pipe.send(tracemalloc.get_traced_memory()[0] - baseline if spec.trace else None)
    await server.stop(0)


# The client process ----------------------------------------------------------------------------------------


def _clients_main(port: int, streams: int, per_channel: int, pipe: multiprocessing.connection.Connection) -> None:
    asyncio.run(_hold(port, streams, per_channel, pipe))


async def _hold(port: int, streams: int, per_channel: int, pipe: multiprocessing.connection.Connection) -> None:
    options = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel
    channels = [
        grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) for _ in range(0, streams, per_channel)
    ]

    async def hold(index: int) -> None:
        call = channels[index // per_channel].unary_stream(
            SUBSCRIBE_TOPIC,
            request_serializer=consensus.ConsensusTopicQuery.SerializeToString,
            response_deserializer=consensus.ConsensusTopicResponse.FromString,
        )(consensus.ConsensusTopicQuery(topicID=basic_types_pb2.TopicID(topicNum=1)))
        try:
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                print(f"stream {index}: {error.code().name} {error.details()}", file=sys.stderr)

    tasks = [asyncio.create_task(hold(index)) for index in range(streams // 2)]
    await asyncio.to_thread(pipe.recv)  # "more": the server's memory with half of them open was read
    tasks += [asyncio.create_task(hold(index)) for index in range(streams // 2, streams)]
    await asyncio.to_thread(pipe.recv)  # "stop"
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
