"""The signature evidence the import records per file: which nodes of the book in force signed validly, whose
signature failed and whose was missing, in the transaction of the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from tests.importer.fixtures import FIRST, NODE_IDS, SECOND
from tests.importer.importing import copy_streams, flip, node_file, run

from ledgermirror.db import evidence
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")


def _rows(url: str) -> list[evidence.Evidence]:
    async def go() -> list[evidence.Evidence]:
        conn = await asyncpg.connect(url)
        try:
            return list(reversed(await evidence.recent(conn, 10)))
        finally:
            await conn.close()

    return asyncio.run(go())


def test_every_file_gets_valid_failed_and_missing_nodes(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    node_file(streams, NODE_IDS[1], f"{FIRST}.rcd_sig").unlink()
    wrong = node_file(streams, NODE_IDS[2], f"{FIRST}.rcd_sig")
    wrong.write_bytes(flip(wrong.read_bytes(), -100))
    run(database.owner_url, streams)
    first, second = _rows(database.owner_url)
    assert first.name == f"{FIRST}.rcd.gz"
    assert (first.valid_nodes, first.failed_nodes, first.missing_nodes) == (
        (NODE_IDS[0], NODE_IDS[3]),
        (NODE_IDS[2],),
        (NODE_IDS[1],),
    )
    assert second.name == f"{SECOND}.rcd.gz"
    assert (second.valid_nodes, second.failed_nodes, second.missing_nodes) == (tuple(NODE_IDS), (), ())
    assert first.imported_at <= second.imported_at
    assert first.consensus_end < second.consensus_end


def test_a_refused_file_leaves_no_evidence(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    for node_id in NODE_IDS[1:]:
        path = node_file(streams, node_id, f"{FIRST}.rcd_sig")
        path.write_bytes(flip(path.read_bytes(), -100))
    with pytest.raises(Exception, match="onsensus"):
        run(database.owner_url, streams)
    assert _rows(database.owner_url) == []
