"""Simulated networks for the status evaluator's tests: a stream from ``ledgermirror.simulator`` whose node
folders are then changed as a network would misbehave (a node that stops signing, one signing with a wrong
key), imported piece by piece with the real importer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from tests.importer.importing import run

from ledgermirror.importer.signature_file import read_signature_file
from ledgermirror.importer.stream_names import instant_of
from ledgermirror.simulator import stream_files
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

FILES = 30
SILENT_NODE = 1
"""Stops signing from file :data:`SILENT_FROM` on (its account is 0.0.4)."""
SILENT_FROM = 16
WRONG_KEY_NODE = 2
"""Signs with a key that is not its own from file :data:`WRONG_FROM` on (account 0.0.5)."""
WRONG_FROM = 26


def freezes(root: Path) -> list[dict[str, object]]:
    """The freeze transactions of the network (``truth.json``)."""
    found: list[dict[str, object]] = json.loads((root / "truth.json").read_text())["freezes"]
    return found


@dataclass(frozen=True, slots=True)
class Network:
    root: Path
    names: tuple[str, ...]
    """The record files, in order."""

    def instant(self, index: int) -> int:
        """The consensus start (from its name) of file ``index`` (0-based)."""
        return instant_of(self.names[index])

    def import_up_to(self, url: str, index: int) -> int:
        """Import (resuming) every file up to ``index``; returns how many were imported."""
        first = not (self.root / ".imported").exists()
        options = {"initial_balances": self.root / INITIAL_BALANCES} if first else {}
        (self.root / ".imported").touch()
        return run(url, self.root, book=self.root / "addressbook.bin", end=self.instant(index), **options).files


def _folder(root: Path, node_id: int) -> Path:
    return root / "recordstreams" / f"record0.0.{node_id + 3}"


def misbehaving_network(root: Path) -> Network:
    """A 4-node network of :data:`FILES` files: node 1 stops signing, node 2 later signs with a wrong key; an
    upgrade is scheduled on the ledger (FREEZE_UPGRADE, an hour ahead) and aborted (FREEZE_ABORT) mid-run."""
    simulate(root, nodes=4, seconds=2 * FILES, tps=3, seed=5, upgrade_freezes=True)
    names = tuple(sorted(path.name for path in _folder(root, 0).glob("*.rcd.gz")))
    assert len(names) == FILES
    wrong_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for index, name in enumerate(names):
        signature_name = name.removesuffix(".gz") + "_sig"
        if index >= SILENT_FROM:
            (_folder(root, SILENT_NODE) / signature_name).unlink()
        if index >= WRONG_FROM:
            path = _folder(root, WRONG_KEY_NODE) / signature_name
            signed = read_signature_file(signature_name, path.read_bytes())
            assert signed.metadata_hash is not None
            path.write_bytes(stream_files.signature_file(wrong_key, signed.file_hash, signed.metadata_hash))
    return Network(root, names)
