"""One embedded PostgreSQL per test run (migrated, with the read-only API role); data reset per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings as hypothesis_settings
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.runtime import Prepared, prepare
from ledgermirror.settings import Settings

# Examples are judged by what they find, not by how fast a shared CI machine runs them.
hypothesis_settings.register_profile("ledgermirror", deadline=None)
hypothesis_settings.load_profile("ledgermirror")


@pytest.fixture(scope="session")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prepared]:
    prepared = prepare(Settings(data_dir=tmp_path_factory.mktemp("db")))
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


@pytest.fixture
def ledger(database: Prepared) -> Ledger:
    ledger = Ledger(database.owner_url)
    ledger.reset()
    return ledger


@pytest.fixture
def client(session_client: TestClient, ledger: Ledger, api_settings: Settings) -> TestClient:
    """A client on clean data, fresh response cache, and the session's settings."""
    session_client.app.state.ctx.reconfigure(api_settings)  # type: ignore[attr-defined]
    return session_client
