"""The API over a real streaming standby: a primary and its standby on 127.0.0.1 (``tests/replication.py``), a
simulated stream imported into the primary, the API reading the standby (and the primary as its last URL).

One standby for the module: the checks run in order on it (same answers, a paused standby left and readiness
failing, a stopped standby left with no 5xx, then both recoveries)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from hiero_sdk_python.hapi.mirror import consensus_service_pb2 as consensus
from hiero_sdk_python.hapi.mirror import consensus_service_pb2_grpc as consensus_grpc
from starlette.testclient import TestClient
from tests.grpc_api.conftest import ServerThread, Topics, expected_response, subscribe, write_messages
from tests.importer.importing import run
from tests.replication import Server, primary_and_standby, remove
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.api.freshness import HEADER
from ledgermirror.db.commit_notify import CHANNEL
from ledgermirror.importer.stream_names import instant_of
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

ROUTES = (
    "/api/v1/transactions?limit=5",
    "/api/v1/accounts?limit=5",
    "/api/v1/blocks?limit=3",
    "/api/v1/network/supply",
    "/api/v1/tokens?limit=5",
)
BOUND = 1.0
"""The replay lag bound of these tests, in seconds."""


def _sql(url: str, text: str) -> Any:
    async def go() -> Any:
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetchval(text)
        finally:
            await conn.close()

    return asyncio.run(go())


def _wait_for(condition: Any, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server, Path]]:
    folder = tmp_path_factory.mktemp("replication")
    primary, standby = primary_and_standby(folder / "clusters")
    try:
        prepare(Settings(db_url=primary.url), run_migrations=True)
        stream = folder / "stream"
        simulate(stream, nodes=2, seconds=12, tps=20, seed=3)
        yield primary, standby, stream
    finally:
        remove(primary, standby)


def _files(stream: Path) -> list[int]:
    return sorted({instant_of(path.name) for path in stream.rglob("*.rcd*") if "sidecar" not in path.parts})


def _caught_up(primary: Server, standby: Server) -> bool:
    """The standby has replayed all the primary's WAL (its insert position: with asynchronous commits the
    write position may not hold the last commit yet)."""
    wanted = _sql(primary.url, "select pg_current_wal_insert_lsn()::text")
    return bool(_sql(standby.url, f"select pg_last_wal_replay_lsn() >= '{wanted}'::pg_lsn"))


def _settings() -> Settings:
    return Settings(replica_max_lag_seconds=BOUND, replica_check_seconds=0.2)


def test_the_api_on_the_standby_answers_as_on_the_primary_and_leaves_it_while_paused_or_stopped(
    pair: tuple[Server, Server, Path],
) -> None:
    primary, standby, stream = pair
    files = _files(stream)
    run(
        primary.url,
        stream,
        book=stream / "addressbook.bin",
        initial_balances=stream / INITIAL_BALANCES,
        end=files[len(files) // 2],
    )
    _wait_for(lambda: _caught_up(primary, standby))
    role = "mirror_api"
    replicas = f"{standby.url_as(role)},{primary.url_as(role)}"
    lenient = Settings(replica_max_lag_seconds=3600, replica_check_seconds=0.2)  # the pause never reaches it
    with (
        TestClient(create_app(_settings(), primary.url_as(role))) as first,
        TestClient(create_app(_settings(), standby.url_as(role))) as second,
        TestClient(create_app(_settings(), replicas), raise_server_exceptions=False) as spread,
        TestClient(create_app(lenient, replicas)) as behind,
    ):
        # the same answers, with the same freshness header (the newest file imported so far)
        for route in ROUTES:
            a, b = first.get(route), second.get(route)
            assert a.status_code == b.status_code == 200, route
            assert a.json() == b.json(), route
            assert a.headers[HEADER] == b.headers[HEADER], route
        half_newest = _sql(primary.url, "select max(consensus_end) from record_file")
        assert first.get(ROUTES[0]).headers[HEADER] == format_ns(half_newest)
        ready = second.get("/health/readiness")
        assert ready.status_code == 200, ready.text
        assert ready.json()["replication_lag_seconds"] == 0

        newest = _paused(
            primary=primary,
            standby=standby,
            stream=stream,
            second=second,
            spread=spread,
            behind=behind,
            half_newest=half_newest,
        )

        # recovered: the standby catches up and serves again
        _wait_for(lambda: _caught_up(primary, standby))
        _wait_for(lambda: second.get("/health/readiness").status_code == 200, seconds=10)
        assert second.get("/api/v1/transactions?limit=3").headers[HEADER] == format_ns(newest)
        _wait_for(lambda: _all_up(spread))

        _stopped(standby, second, spread)
        _wait_for(lambda: second.get("/health/readiness").status_code == 200, seconds=20)
        _wait_for(lambda: _all_up(spread))
        for route in ("transactions", "accounts", "blocks", "tokens"):  # routes neither has cached
            fresh = f"/api/v1/{route}?limit=14"
            assert spread.get(fresh).json() == first.get(fresh).json(), route


def _all_up(client: TestClient) -> bool:
    return all(entry["status"] == "UP" for entry in client.get("/health/readiness").json()["databases"])


def _paused(
    *,
    primary: Server,
    standby: Server,
    stream: Path,
    second: TestClient,
    spread: TestClient,
    behind: TestClient,
    half_newest: int,
) -> int:
    """The rest of the stream goes to the primary while the standby's replay is paused: the standby falls
    behind, fails readiness alone and is left when the primary is listed. Returns the newest timestamp."""
    _sql(standby.url, "select pg_wal_replay_pause()")
    try:
        run(primary.url, stream, book=stream / "addressbook.bin")
        newest: int = _sql(primary.url, "select max(consensus_end) from record_file")
        assert newest > half_newest
        newest_block: int = _sql(primary.url, "select index from record_file order by consensus_end desc limit 1")
        new_account: int = _sql(primary.url, "select max(id) from entity") + 1000  # shard 0, realm 0: id = num
        Ledger(primary.url).load({"accounts": [{"num": new_account}]})
        time.sleep(BOUND + 1.5)
        paused = second.get("/health/readiness")
        assert paused.status_code == 503, paused.text
        assert paused.json()["checks"]["replication"] == "DOWN"
        assert paused.json()["replication_lag_seconds"] > BOUND
        # over both databases: readiness holds (the primary is fresh), the standby is left
        spread_ready = spread.get("/health/readiness")
        assert spread_ready.status_code == 200, spread_ready.text
        states = {entry["role"]: entry["status"] for entry in spread_ready.json()["databases"]}
        assert states == {"standby": "DOWN", "primary": "UP"}
        for limit in range(1, 7):
            answer = spread.get(f"/api/v1/transactions?limit={limit}")
            assert answer.status_code == 200
            assert answer.headers[HEADER] == format_ns(newest)  # read from the primary
        # a standby behind but within the bound serves requests in turn, but never one whose timestamp (a next
        # link's anchor) it has not replayed
        seen = {behind.get(f"/api/v1/blocks?limit={limit}").headers[HEADER] for limit in range(1, 9)}
        assert seen == {format_ns(newest), format_ns(half_newest)}
        for limit in range(1, 7):
            anchored = behind.get(f"/api/v1/transactions?limit={limit}&timestamp=lte:{format_ns(newest)}")
            assert anchored.status_code == 200
            assert anchored.headers[HEADER] == format_ns(newest)
        # lists paged by entity id or block number (and keys of no global order): a next link's bound the
        # standby has not replayed sends the request to the primary; one it holds leaves it in turn
        for limit in range(1, 7):
            for path in (
                f"/api/v1/accounts?limit={limit}&account.id=lt:0.0.{new_account}",
                f"/api/v1/tokens?limit={limit}&token.id=gt:0.0.{new_account}",
                f"/api/v1/blocks?limit={limit}&block.number=lt:{newest_block}",
                f"/api/v1/accounts/0.0.2/nfts?limit={limit}&serialnumber=lt:5&token.id=lte:0.0.9",
            ):
                answer = behind.get(path)
                assert answer.status_code == 200, (path, answer.text)
                assert answer.headers[HEADER] == format_ns(newest), path
        held = {
            behind.get(f"/api/v1/accounts?limit={limit}&account.id=lt:0.0.5").headers[HEADER]
            for limit in range(1, 9)
        }
        assert held == {format_ns(newest), format_ns(half_newest)}
    finally:
        _sql(standby.url, "select pg_wal_replay_resume()")
    return newest


def _stopped(standby: Server, second: TestClient, spread: TestClient) -> None:
    """No 5xx over both databases while the standby is down; the standby alone answers 503."""
    standby.stop("immediate")
    try:
        for limit in range(7, 13):
            for route in ("transactions", "accounts", "blocks", "tokens"):
                answer = spread.get(f"/api/v1/{route}?limit={limit}")
                assert answer.status_code == 200, (route, answer.text)
        alone = second.get("/api/v1/transactions?limit=4")  # not cached: a read, and nothing else to read
        assert alone.status_code == 503
        down = spread.get("/health/readiness")
        assert down.status_code == 200
        answered = {entry["role"]: entry["answered"] for entry in down.json()["databases"]}
        assert answered["primary"] is True
    finally:
        standby.start()


GRPC_TOPIC = 4242


def test_a_topic_subscription_on_the_standby_learns_of_commits_from_the_primary(
    pair: tuple[Server, Server, Path],
) -> None:
    """The gRPC API on the standby: history from the standby, then live messages as the standby replays them,
    woken by the importer's announcement on the primary (the poll interval is far longer than the wait)."""
    primary, standby, _ = pair
    rows = Topics(Ledger(primary.url), primary.url, t0=time.time_ns())
    rows.topic(GRPC_TOPIC)
    first = rows.messages(3, topic=GRPC_TOPIC)
    _wait_for(lambda: _caught_up(primary, standby))
    settings = Settings(db_url=primary.url, grpc_poll_interval_ms=60_000, replica_check_seconds=0.2)
    where = Prepared(owner_url=primary.url, api_url=standby.url_as("mirror_api"), embedded=None)
    server = ServerThread(settings, where)
    try:
        assert server.server.hub is not None and not server.server.hub.trust_announcements
        assert server.server.listen_dsn == primary.url
        later = rows.message_rows(2, topic=GRPC_TOPIC)

        def commit_later() -> None:
            time.sleep(1.0)
            write_messages(primary.url, later)
            _sql(primary.url, f"select pg_notify('{CHANNEL}', '{later[-1]['consensus_timestamp']}')")

        writer = threading.Thread(target=commit_later)
        writer.start()
        with grpc.insecure_channel(server.address) as channel:
            request = consensus.ConsensusTopicQuery(limit=5)
            request.topicID.topicNum = GRPC_TOPIC
            request.consensusStartTime.seconds = 0
            outcome = subscribe(consensus_grpc.ConsensusServiceStub(channel), request, seconds=20)
        writer.join()
        assert outcome.code == grpc.StatusCode.OK, outcome.details
        assert outcome.responses == [expected_response(row) for row in first + later]
    finally:
        server.stop()


def test_a_standby_that_lost_its_primary_reports_a_growing_lag_and_fails_readiness(
    pair: tuple[Server, Server, Path],
) -> None:
    """The primary stops: the standby's WAL receiver is gone, it has replayed all it received, and what the
    primary would commit never arrives. Its lag grows from then (``db/replicas.py``), readiness fails past the
    bound and it is left; once the primary is back and the receiver reconnects, it serves again."""
    primary, standby, _ = pair
    _wait_for(lambda: _caught_up(primary, standby))
    role = "mirror_api"
    both = f"{standby.url_as(role)},{primary.url_as(role)}"
    with (
        TestClient(create_app(_settings(), standby.url_as(role))) as alone,
        TestClient(create_app(_settings(), both), raise_server_exceptions=False) as spread,
    ):
        _wait_for(lambda: alone.get("/health/readiness").status_code == 200, seconds=20)
        primary.stop("fast")
        try:
            _wait_for(lambda: _lag(alone) > 0)
            first = _lag(alone)
            time.sleep(BOUND + 1.5)
            cut_off = alone.get("/health/readiness")
            assert cut_off.status_code == 503, cut_off.text
            assert cut_off.json()["checks"]["replication"] == "DOWN"
            assert cut_off.json()["replication_lag_seconds"] > max(first, BOUND)  # growing, past the bound
            listed = {entry["role"]: entry for entry in spread.get("/health/readiness").json()["databases"]}
            assert listed["standby"]["cut_off"] is True
            assert listed["standby"]["status"] == "DOWN"  # left: no request chooses it while another answers
            assert listed["primary"]["answered"] is False
        finally:
            primary.start()
        # the receiver reconnects (the standby retries every wal_retrieve_retry_interval, 5 s): lag 0 again
        _wait_for(lambda: alone.get("/health/readiness").status_code == 200, seconds=30)
        assert _lag(alone) == 0
        assert alone.get("/api/v1/blocks?limit=1").status_code == 200


def _lag(client: TestClient) -> float:
    lag: float = client.get("/health/readiness").json()["replication_lag_seconds"]
    return lag
