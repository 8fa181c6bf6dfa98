"""``X-Newest-Consensus-Timestamp`` with one database (``api/freshness.py``): every answer says how fresh it is,
browsers may read it across origins, and the header is made by the probe, not per request."""

from __future__ import annotations

import time

from starlette.testclient import TestClient
from tests.api.test_blocks import BLOCKS, end
from tests.support import Ledger

from ledgermirror.api.context import AppContext
from ledgermirror.api.freshness import EXPOSE, HEADER
from ledgermirror.ledger.timestamps import format_ns

URL = "/api/v1/blocks?limit=2"


NEVER_CACHED = "/api/v1/blocks?limit=nonsense"
"""A 400: never cached, and read from the database the request was pinned to like any answer."""


def _fresh_header(client: TestClient, wanted: str | None, seconds: float = 10.0) -> dict[str, str]:
    """The headers of an answer once its freshness header is ``wanted`` (the probe runs every second)."""
    deadline = time.monotonic() + seconds
    while True:
        answer = client.get(NEVER_CACHED)
        assert answer.status_code == 400, answer.text
        if answer.headers.get(HEADER) == wanted:
            return dict(answer.headers)
        assert time.monotonic() < deadline, (answer.headers.get(HEADER), wanted)
        time.sleep(0.1)


def test_answers_carry_the_newest_timestamp_and_browsers_may_read_it(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"recordFiles": BLOCKS[:3]})
    newest = format_ns(end(3))
    headers = _fresh_header(client, newest)
    exposed = [name.strip().lower() for name in headers[EXPOSE].split(",")]
    assert HEADER in exposed

    first = client.get(URL)
    assert first.status_code == 200
    assert first.headers[HEADER] == newest
    assert HEADER in first.headers[EXPOSE].lower()
    cached = client.get(URL)  # from the response cache: the header it was read with
    assert cached.headers[HEADER] == newest and HEADER in cached.headers[EXPOSE].lower()
    unchanged = client.get(URL, headers={"if-none-match": first.headers["etag"]})
    assert unchanged.status_code == 304
    assert unchanged.headers[HEADER] == newest and HEADER in unchanged.headers[EXPOSE].lower()

    ledger.load({"recordFiles": BLOCKS[3:]})  # newer files: the next probe moves the header on
    _fresh_header(client, format_ns(end(len(BLOCKS))))


def test_an_empty_database_answers_without_the_header(client: TestClient, ledger: Ledger) -> None:
    headers = _fresh_header(client, None)  # once a probe has seen the emptied tables
    assert EXPOSE not in headers


def test_with_one_database_the_headers_are_made_by_the_probe_once_per_new_timestamp(
    client: TestClient, ledger: Ledger
) -> None:
    ctx: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    database = ctx.database
    only = database.single
    assert only is not None and database.members == [only]  # nothing to choose: requests are not pinned
    ledger.load({"recordFiles": BLOCKS[:2]})

    async def probe() -> None:
        await database.probe(only, timeout=5)

    client.portal.call(probe)  # type: ignore[union-attr]
    made = only.headers
    assert made == {HEADER: format_ns(end(2)), EXPOSE: made[EXPOSE]}
    client.portal.call(probe)  # type: ignore[union-attr]
    assert only.headers is made  # the same timestamp: the same headers, not made again
    assert client.get(URL).headers[HEADER] == format_ns(end(2))
