"""The importer tests' S3 server: one ``weed mini`` (bench/_s3server.py) on 127.0.0.1 for the whole run, started
by the first module that needs it; each module uploads its files under prefixes of its own (``flat``, ``bynode``,
``fixture``, ``cutover``, ``mixed``, ``net``) and a test that counts the server's requests counts the difference
over its own import."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bench._s3server import S3Server, ServerUnavailable, weed_mini


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    try:
        with weed_mini(tmp_path_factory.mktemp("weed")) as server:
            yield server
    except ServerUnavailable as error:
        pytest.skip(f"no S3 server: {error}")
