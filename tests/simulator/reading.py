"""Test-side reading of a simulated network: its files per node, each verified item with its parsed body."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hiero_sdk_python.hapi.services import (
    transaction_contents_pb2,
    transaction_pb2,
)

from ledgermirror.importer.address_book import read_address_book
from ledgermirror.importer.verify import ChainLink, VerifiedRecordFile, verify_stream_file


@dataclass(frozen=True)
class Item:
    consensus_timestamp: int
    body: Any
    body_name: str
    record: Any
    signed: Any
    """The ``SignedTransaction`` (body bytes and signature map)."""


def node_folders(out: Path) -> list[Path]:
    """The node folders in node order, as truth.json lists them (either layout)."""
    truth = json.loads((out / "truth.json").read_text())
    return [out / folder for folder in truth["network"]["folders"]]


def verify_all(out: Path) -> list[VerifiedRecordFile]:
    """Every record file, with the signatures of every node, its sidecar and the chain, as the importer
    would check them; raises on the first refusal."""
    book = read_address_book((out / "addressbook.bin").read_bytes())
    folders = node_folders(out)
    names = sorted(path.name for path in folders[0].iterdir() if path.name.endswith((".rcd", ".rcd.gz")))
    verified = []
    previous: ChainLink | None = None
    for name in names:  # v6 files are .rcd.gz, v5 and v2 files .rcd
        stem = name.split(".rcd", 1)[0]
        signatures = {
            node_id: (f"{stem}.rcd_sig", (folder / f"{stem}.rcd_sig").read_bytes())
            for node_id, folder in enumerate(folders)
        }
        sidecar = folders[0] / "sidecar" / f"{stem}_01.rcd.gz"
        sidecars = {1: sidecar.read_bytes()} if sidecar.exists() else {}
        result = verify_stream_file(
            name, (folders[0] / name).read_bytes(), signatures, book, previous, sidecars=sidecars
        )
        previous = result.link()
        verified.append(result)
    return verified


def items_of(files: list[VerifiedRecordFile]) -> list[Item]:
    items = []
    for verified in files:
        for item in verified.record.items:
            transaction = transaction_pb2.Transaction.FromString(item.transaction_bytes)
            signed = transaction_contents_pb2.SignedTransaction.FromString(transaction.signedTransactionBytes)
            body = transaction_pb2.TransactionBody.FromString(signed.bodyBytes)
            name = body.WhichOneof("data")
            items.append(Item(item.consensus_timestamp, body, name, item.record, signed))
    return items
