"""Listing only the heaviest third of the nodes (plus one) and reading the others' signature files by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.importer.fixtures import FIRST
from tests.importer.importing import copy_streams, node_file, run

from ledgermirror.importer.sources import LocalStore
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")


class CountingStore(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.listed: set[str] = set()

    async def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        self.listed.add(folder)
        return await super().names_after(folder, after, suffix, limit)


def test_a_third_plus_one_is_listed_and_every_signature_counts(database: Prepared, tmp_path: Path) -> None:
    streams = copy_streams(tmp_path / "streams")
    store = CountingStore(streams)
    stats = run(database.owner_url, store, list_every_node=False)
    assert stats.files == 2
    assert len(store.listed) == 3  # 4 equal nodes: 2 reach one third, 1 more for margin


def test_signatures_of_unlisted_nodes_are_read_by_name(database: Prepared, tmp_path: Path) -> None:
    """Of the three listed nodes only one has the first file's signature; the fourth node, not listed,
    supplies the second signature that one third needs."""
    streams = copy_streams(tmp_path / "streams")
    for node_id in (1, 2):  # listed (with node 0) but without this file's signature
        node_file(streams, node_id, f"{FIRST}.rcd_sig").unlink()
    store = CountingStore(streams)
    stats = run(database.owner_url, store, list_every_node=False)
    assert "recordstreams/record0.0.6" not in store.listed
    assert stats.files == 2


def test_a_folder_lists_every_node_by_default(database: Prepared, tmp_path: Path) -> None:
    store = CountingStore(copy_streams(tmp_path / "streams"))
    run(database.owner_url, store)
    assert len(store.listed) == 4
