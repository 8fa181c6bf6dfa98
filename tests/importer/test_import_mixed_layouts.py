"""A source where some nodes write the legacy ``recordstreams/record0.0.N/`` layout and others HIP-679's
``<network>/<shard>/<node id>/record/`` at the same time (the reference's ``pathType=AUTO``), from a folder and
from a real S3 server: every node is found in either layout and consensus counts all of them."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from bench._s3server import S3Server, upload
from tests.importer.fixtures import EXPECTED, FIRST, RECORDS, SECOND
from tests.importer.importing import copy_streams, fetch, run, table_counts
from tests.support import Ledger

from ledgermirror.importer.errors import ConsensusNotReached
from ledgermirror.importer.sources import discover_nodes, open_store
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

LEGACY = (0, 1)
BY_NODE = (2, 3)


def _legacy(root: Path, node_id: int) -> Path:
    return root / "recordstreams" / f"record0.0.{node_id + 3}"


def _by_node(root: Path, node_id: int) -> Path:
    return root / "testnet" / "0" / str(node_id) / "record"


def mixed(root: Path) -> Path:
    """Nodes 0 and 1 in the legacy layout, nodes 2 and 3 in HIP-679's."""
    for node_id in LEGACY:
        shutil.copytree(RECORDS / f"record0.0.{node_id + 3}", _legacy(root, node_id))
    for node_id in BY_NODE:
        shutil.copytree(RECORDS / f"record0.0.{node_id + 3}", _by_node(root, node_id))
    return root


def needing_both_layouts(root: Path) -> Path:
    """The mixed source where no layout alone holds one third of the signatures of either file: the first
    file is signed by node 1 (legacy) and node 3 (HIP-679) only; node 1 moved to HIP-679 between the files
    (its second file is only in its new folder), and the second file is signed by nodes 1 and 3 only."""
    mixed(root)
    _legacy(root, 0).joinpath(f"{FIRST}.rcd_sig").unlink()
    _by_node(root, 2).joinpath(f"{FIRST}.rcd_sig").unlink()
    moved = _by_node(root, 1)
    moved.mkdir(parents=True)
    shutil.move(_legacy(root, 1) / f"{SECOND}.rcd.gz", moved / f"{SECOND}.rcd.gz")
    shutil.move(_legacy(root, 1) / f"{SECOND}.rcd_sig", moved / f"{SECOND}.rcd_sig")
    shutil.move(_legacy(root, 1) / "sidecar", moved / "sidecar")
    _legacy(root, 0).joinpath(f"{SECOND}.rcd_sig").unlink()
    _by_node(root, 2).joinpath(f"{SECOND}.rcd_sig").unlink()
    return root


def _names(url: str) -> list[str]:
    return [row["name"] for row in fetch(url, "select name from record_file order by consensus_end")]


def test_both_layouts_are_discovered(tmp_path: Path) -> None:
    folders = asyncio.run(discover_nodes(open_store(str(needing_both_layouts(tmp_path / "mixed")))))
    assert [folder.path for folder in folders] == [
        "recordstreams/record0.0.3",
        "recordstreams/record0.0.4",
        "testnet/0/1/record",
        "testnet/0/2/record",
        "testnet/0/3/record",
    ]


def test_a_mixed_folder_imports_as_one_layout_does(database: Prepared, ledger: Ledger, tmp_path: Path) -> None:
    stats = run(database.owner_url, mixed(tmp_path / "mixed"))
    assert (stats.files, stats.items) == (2, 3)
    from_mixed = table_counts(database.owner_url)
    ledger.reset()
    run(database.owner_url, copy_streams(tmp_path / "legacy"))
    assert table_counts(database.owner_url) == from_mixed


@pytest.mark.parametrize("every_node", [True, False])
def test_consensus_counts_the_nodes_of_both_layouts(database: Prepared, tmp_path: Path, every_node: bool) -> None:
    stats = run(database.owner_url, needing_both_layouts(tmp_path / "mixed"), list_every_node=every_node)
    assert stats.files == 2
    assert _names(database.owner_url) == [f"{FIRST}.rcd.gz", f"{SECOND}.rcd.gz"]


def test_one_layout_alone_misses_consensus(database: Prepared, tmp_path: Path) -> None:
    """Control: without the HIP-679 folders the first file has one signature of four, and is refused."""
    root = needing_both_layouts(tmp_path / "mixed")
    shutil.rmtree(root / "testnet")
    with pytest.raises(ConsensusNotReached, match=r"with 1/4 stake"):
        run(database.owner_url, root)
    assert table_counts(database.owner_url) == {}


@pytest.fixture(scope="module")
def s3(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> S3Server:
    upload(s3_server, needing_both_layouts(tmp_path_factory.mktemp("mixed")), "mixed")
    return s3_server


def test_a_mixed_bucket(database: Prepared, s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    url = f"s3://{s3.bucket}/mixed"
    stats = run(database.owner_url, url, start=EXPECTED[FIRST].consensus_start)
    assert stats.files == 2
    assert _names(database.owner_url) == [f"{FIRST}.rcd.gz", f"{SECOND}.rcd.gz"]
    assert run(database.owner_url, url, book=None).files == 0
