"""The network's account balance files, as nodes write them every 15 minutes of consensus time: the ledger's
HBAR and token balances after a record file, as ``<ts>_Balances.pb.gz`` (``AllAccountBalances``) or, every other
one, ``<ts>_Balances.csv`` (v2: a base64 ``TokenBalances`` per account), with each node's v2 signature file (the
SHA-384 of the decompressed bytes, RSA-signed) in its balance folder beside its record folder."""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib
import struct
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384

from ledgermirror.importer.balance_snapshots import instant_text
from ledgermirror.importer.stream_names import stem_of
from ledgermirror.simulator.ledger_state import Ledger

EVERY_NS = 15 * 60 * 1_000_000_000
"""The network's cadence."""


def balance_folder(record_folder: Path) -> Path:
    """``accountBalances/balance0.0.N`` beside ``recordstreams/record0.0.N``, or ``balance`` beside ``record``."""
    if record_folder.name == "record":
        return record_folder.parent / "balance"
    return (
        record_folder.parent.parent / "accountBalances" / ("balance" + record_folder.name.removeprefix("record"))
    )


def _token_balances(ledger: Ledger) -> dict[int, list[tuple[int, int]]]:
    by_account: dict[int, list[tuple[int, int]]] = {}
    for token in sorted(ledger.tokens):
        for account, balance in sorted(ledger.tokens[token].balances.items()):
            by_account.setdefault(account, []).append((token, balance))
    return by_account


def protobuf_file(protos: Any, ledger: Ledger, consensus_timestamp: int) -> bytes:
    """An ``AllAccountBalances`` of every account's HBAR and token balances (uncompressed)."""
    module = importlib.import_module("hiero_sdk_python.hapi.streams.account_balance_file_pb2")
    message = module.AllAccountBalances()
    message.consensusTimestamp.seconds, message.consensusTimestamp.nanos = divmod(
        consensus_timestamp, 1_000_000_000
    )
    tokens = _token_balances(ledger)
    for account in sorted(ledger.balances):
        entry = message.allAccounts.add(
            accountID=protos.basic.AccountID(accountNum=account), hbarBalance=ledger.balances[account]
        )
        for token, balance in tokens.get(account, []):
            entry.tokenUnitBalances.add(tokenId=protos.basic.TokenID(tokenNum=token), balance=balance)
    return bytes(message.SerializeToString())


def csv_v2_file(protos: Any, ledger: Ledger, consensus_timestamp: int) -> bytes:
    """The same as a v2 CSV file."""
    tokens = _token_balances(ledger)
    lines = [
        "# version:2",
        f"# TimeStamp:{instant_text(consensus_timestamp)}",
        "shardNum,realmNum,accountNum,balance,tokenBalances",
    ]
    for account in sorted(ledger.balances):
        listed = protos.basic.TokenBalances()
        for token, balance in tokens.get(account, []):
            listed.tokenBalances.add(tokenId=protos.basic.TokenID(tokenNum=token), balance=balance)
        encoded = base64.b64encode(listed.SerializeToString()).decode() if listed.tokenBalances else ""
        lines.append(f"0,0,{account},{ledger.balances[account]},{encoded}")
    return ("\n".join(lines) + "\n").encode()


def signature_v2(key: rsa.RSAPrivateKey, file_hash: bytes) -> bytes:
    signed = key.sign(file_hash, PKCS1v15(), SHA384())
    return b"\x04" + file_hash + b"\x03" + struct.pack(">i", len(signed)) + signed


def write_balance_file(  # noqa: PLR0917
    protos: Any,
    ledger: Ledger,
    consensus_timestamp: int,
    csv: bool,
    record_folders: list[Path],
    node_keys: list[rsa.RSAPrivateKey],
) -> str:
    """Write one balance file and its signature files into every node's balance folder; returns its name."""
    plain = (csv_v2_file if csv else protobuf_file)(protos, ledger, consensus_timestamp)
    name = stem_of(consensus_timestamp) + ("_Balances.csv" if csv else "_Balances.pb")
    stored = plain if csv else gzip.compress(plain, mtime=0)
    file_hash = hashlib.sha384(plain).digest()
    for folder, key in zip(record_folders, node_keys, strict=True):
        target = balance_folder(folder)
        target.mkdir(parents=True, exist_ok=True)
        (target / (name if csv else name + ".gz")).write_bytes(stored)
        (target / f"{name}_sig").write_bytes(signature_v2(key, file_hash))
    return name if csv else name + ".gz"


class BalanceFiles:
    """Writes a balance file after the first record file ending ``EVERY_NS`` past the last (or the start)."""

    def __init__(self, start: int, record_folders: list[Path], node_keys: list[rsa.RSAPrivateKey]) -> None:
        self.next = start + EVERY_NS
        self.record_folders = record_folders
        self.node_keys = node_keys
        self.names: list[str] = []

    def after_file(self, protos: Any, ledger: Ledger, consensus_end: int) -> None:
        if consensus_end < self.next:
            return
        csv = len(self.names) % 2 == 1
        self.names.append(
            write_balance_file(protos, ledger, consensus_end, csv, self.record_folders, self.node_keys)
        )
        self.next += EVERY_NS
