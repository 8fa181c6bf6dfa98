"""One embedded PostgreSQL per test run (migrated, with the read-only API role); data reset per test.

Each run gets its own base temporary folder (unless ``--basetemp`` is given), so two runs on one machine never
share, or clean away, each other's folders and database.
"""

from __future__ import annotations

import os

# gRPC's fork handlers (on by default in grpcio) run in every fork of this process, also in the fork that a
# subprocess execs at once (pg_ctl starting an embedded server); with gRPC threads of an earlier test still
# running, that child once died with SIGSEGV before its exec. Nothing here forks without exec (every process
# is spawned), so the handlers are off for the suite and the processes it spawns.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import functools
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId
from hypothesis import settings as hypothesis_settings
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.api.app import create_app
from ledgermirror.clock import SystemClock
from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings
from ledgermirror.simulator import keys as simulator_keys
from ledgermirror.simulator.run import simulate

# Examples are judged by what they find, not by how fast a shared CI machine runs them.
hypothesis_settings.register_profile("ledgermirror", deadline=None)
hypothesis_settings.load_profile("ledgermirror")

_OWN_BASETEMP = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before pytest's temporary-folder plugin reads it: default ``--basetemp`` to a new folder of this run."""
    if config.option.basetemp is None:
        folder = Path(tempfile.mkdtemp(prefix="ledgermirror-pytest-"))
        config.option.basetemp = str(folder)
        config.stash[_OWN_BASETEMP] = folder


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test its own node id. Schemathesis names its items per operation (``test_x[GET /api/v1/tokens]``),
    but under pytest 9.2 they all get the function's node id, and pytest-xdist schedules by node id: it ran one
    operation of 45 and reported 44 tests fewer. Such an item gets the id its name gives (pytest has no public
    setter for it); a duplicate left after that stops the run, rather than running one test in place of many."""
    for item in items:
        head, _, tail = item.nodeid.rpartition("::")
        if head and tail != item.name:
            item._id = NodeId.parse(f"{head}::{item.name}")
    repeated = [nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1]
    if repeated:
        raise pytest.UsageError(f"tests sharing a node id (pytest-xdist would run one of each): {repeated[:5]}")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_OWN_BASETEMP, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def node_keys_derived_once() -> Iterator[None]:
    """The simulator's node keys derived once per (seed, node id, size) in this run, then shared by every network
    simulated in this process: a 3072-bit key is a prime search of 0.6 to 3.4 s of CPU, and the suite simulates
    the same seeds many times (seed 5's first two nodes some twenty times). They are the real keys, from
    ``keys.node_private_key`` itself; only its repeats are skipped. That the derivation gives the same key for the
    same seed and node is tests/simulator/test_simulator_keys.py's, which derives without this cache; a simulator
    run in a subprocess (``ledgermirror simulate``, ``bench/import``) derives its own keys as always."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simulator_keys, "node_private_key", functools.cache(simulator_keys.node_private_key))
        yield


@pytest.fixture(scope="session")
def stream_of_35_minutes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated stream of 35 minutes at 2 TPS (two nodes, seed 24; 1,050 record files, balance files every 15
    minutes), simulated once for tests/api/test_balances_history_imported.py and
    tests/importer/test_import_balance_files.py, which only read it (a test that tampers copies it first)."""
    out = tmp_path_factory.mktemp("stream-of-35-minutes")
    simulate(out, nodes=2, seconds=35 * 60, tps=2, seed=24)
    return out


@pytest.fixture(scope="session")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prepared]:
    prepared = prepare(Settings(data_dir=tmp_path_factory.mktemp("db")), durable=False)
    yield prepared
    prepared.stop()


@pytest.fixture(scope="session")
def api_settings() -> Settings:
    return Settings(max_repeated_query_parameters=8)


@pytest.fixture(scope="session")
def session_client(database: Prepared, api_settings: Settings) -> Iterator[TestClient]:
    app = create_app(api_settings, database.api_url)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(scope="session")
def owner_ledger(database: Prepared) -> Iterator[Ledger]:
    with Ledger.kept(database.owner_url) as ledger:
        yield ledger


@pytest.fixture
def ledger(owner_ledger: Ledger) -> Ledger:
    """The owner's ledger on empty tables: every public table emptied before the test."""
    owner_ledger.reset()
    return owner_ledger


@pytest.fixture
def client(session_client: TestClient, ledger: Ledger, api_settings: Settings) -> TestClient:
    """A client on clean data, fresh response cache, the session's settings and the system clock (a test may have
    fixed the clock before)."""
    reconfigure(session_client, api_settings, SystemClock())
    return session_client
