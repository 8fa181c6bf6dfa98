"""The reference's v6 record stream fixtures (four nodes, two files, one sidecar) and its address books."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STREAMS = Path(__file__).resolve().parents[3] / "shared" / "upstream" / "streams"
if not STREAMS.is_dir():
    STREAMS = Path("/work/shared/upstream/streams")
RECORDS = STREAMS / "data" / "recordstreams" / "v6"
BOOKS = STREAMS / "addressbook"
SIGNING_BOOK = BOOKS / "test-v6-sidecar-4n.bin"
NODE_IDS = (0, 1, 2, 3)
FIRST = "2022-07-13T08_46_08.041986003Z"
SECOND = "2022-07-13T08_46_11.304284003Z"


def node_folder(node_id: int) -> Path:
    return RECORDS / f"record0.0.{node_id + 3}"


def record_bytes(stamp: str, node_id: int = 0) -> bytes:
    return (node_folder(node_id) / f"{stamp}.rcd.gz").read_bytes()


def signature_bytes(stamp: str, node_id: int) -> tuple[str, bytes]:
    name = f"{stamp}.rcd_sig"
    return name, (node_folder(node_id) / name).read_bytes()


def signatures(stamp: str, nodes: tuple[int, ...] = NODE_IDS) -> dict[int, tuple[str, bytes]]:
    return {node_id: signature_bytes(stamp, node_id) for node_id in nodes}


def sidecar_bytes(stamp: str = SECOND, node_id: int = 0) -> bytes:
    return (node_folder(node_id) / "sidecar" / f"{stamp}_01.rcd.gz").read_bytes()


@dataclass(frozen=True)
class Expected:
    block_number: int
    count: int
    consensus_start: int
    consensus_end: int
    size: int
    file_hash: str
    metadata_hash: str
    previous_hash: str
    hash: str


EXPECTED = {
    FIRST: Expected(
        block_number=5,
        count=1,
        consensus_start=1657701968041986003,
        consensus_end=1657701968041986003,
        size=509,
        file_hash="69a4354de5aeb12fbc989ae086fc291cfc1b61415391b4a46915b32aef722a511c4ceba60ecda72d527cc4866a4d235b",
        metadata_hash="361c0176ba28cc55525c50e7e75e58618b451f3dca402d9be19626159d939e7a569534658125732c1af31ff6f4a8e283",
        previous_hash="13d2594b9e9dbb73dad0cad67a96ad7a0e249af8693aa894003876c9ddd5534b3143e4d785e04fc0c461945a03e85178",
        hash="a6c241fad2c636f68a6aa0da9293245a5ef0ebef345cd139858068ff7998716cefe0fd3afa0d21304725507061975279",
    ),
    SECOND: Expected(
        block_number=6,
        count=2,
        consensus_start=1657701971304284003,
        consensus_end=1657701971304284004,
        size=805,
        file_hash="ed518c8d05f470d4540db35ea8665ab158f9aeb0bcaa3332d171c1efba119da52c1ee510df599269b022d963d4d1e474",
        metadata_hash="b13a2b638c5688dbec43b97dbee8ad637d2d42376fc313c628a990ac65aefdbd39832cf5ece42b925a520ed2d2bf8eac",
        previous_hash="a6c241fad2c636f68a6aa0da9293245a5ef0ebef345cd139858068ff7998716cefe0fd3afa0d21304725507061975279",
        hash="3064b824b8b9f9ece011f88a26c030c9f6b822f30fbcabcc7240a220ea42bbdbf305db415a4e41307d0630d5cefe4550",
    ),
}
SIDECAR_HASH = "1ed54ea01aab5e726a087e94a0dd52c0f49b149d7a773ae71a3dc099f623bcf1840393db68f8db476ab11e6159f030f2"
