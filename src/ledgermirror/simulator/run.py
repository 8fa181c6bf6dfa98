"""``simulate``: a whole network's streams on disk, and ``truth.json``.

Layout of ``out``::

    addressbook.bin                               initial NodeAddressBook (the importer's --address-book)
    initial-balances.pb.gz                        genesis balances, an AllAccountBalances snapshot
    keys/node<i>.pem                              node i's RSA private key (PKCS#8 PEM), for tamper tests
    recordstreams/record0.0.<3+i>/<ts>.rcd.gz     the record files, byte-identical in every node folder
    recordstreams/record0.0.<3+i>/<ts>.rcd_sig    node i's signature file of each record file
    recordstreams/record0.0.<3+i>/sidecar/<ts>_01.rcd.gz   the sidecar of a record file with contract items
    block/0000/0000/0000/0000/NNN.blk.zstd        ``--format blocks|cutover``: wrapped record blocks
    truth.json                                    what the network holds at the end (see truth.py)

With ``layout="node-id"`` the node folders are HIP-679's ``simulated/0/<i>/record/`` instead. ``fmt`` chooses
the streams: ``records`` (every file as a record file), ``blocks`` (every file as a wrapped record block,
:mod:`.block_files`) or ``cutover`` (the first half as record files, the rest as blocks: the network moves
from record streams to block streams mid-run).
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import importlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from ledgermirror.simulator import (
    block_files,
    crypto,
    hapi,
    keys,
    native_blocks,
    staking,
    stream_files,
    system,
    truth,
)
from ledgermirror.simulator.balance_files import BalanceFiles
from ledgermirror.simulator.emitter import Emitter, StreamItem
from ledgermirror.simulator.ledger_state import TREASURY, Ledger, genesis_balances
from ledgermirror.simulator.mix import Mix
from ledgermirror.simulator.picks import HBAR

FILE_SECONDS = 2
HAPI_VERSION = (0, 66, 0)
DEFAULT_START = calendar.timegm((2026, 1, 1, 0, 0, 0, 0, 0, 0)) * 1_000_000_000
BOOTSTRAP_ACCOUNTS = 30
EXCHANGE_RATE_EVERY_FILES = 30
ACCOUNT_LAYOUT = "account"
NODE_ID_LAYOUT = "node-id"
LAYOUTS = (ACCOUNT_LAYOUT, NODE_ID_LAYOUT)
INITIAL_BALANCES = "initial-balances.pb.gz"
FORMATS = ("records", "blocks", "cutover", "native")
MIXED_VERSIONS = "mixed"
RECORD_VERSIONS = ("6", "5", "2", MIXED_VERSIONS)
NETWORK_NAME = "simulated"
"""The network folder of the HIP-679 layout."""


@dataclass(frozen=True, slots=True)
class Summary:
    out: Path
    record_files: int
    transactions: int
    sidecar_files: int
    bytes_written: int
    seconds_keys: float
    seconds_total: float


def simulate(
    out: Path,
    *,
    nodes: int = 4,
    seconds: int = 60,
    tps: int = 100,
    seed: int = 0,
    start: int = DEFAULT_START,
    layout: str = ACCOUNT_LAYOUT,
    fmt: str = "records",
    record_version: str = "6",
    upgrade_freezes: bool = False,
    evm_contracts: bool = False,
) -> Summary:
    """Write ``seconds // 2`` record files (at least one) of about ``2 * tps`` transactions each, in the
    ``recordstreams/record0.0.N/`` layout or (``layout="node-id"``) HIP-679's ``<network>/0/<node>/record/``.
    ``record_version`` is 6, 5 or 2 for every file, or ``mixed``: the first third v2, the next v5, the rest
    v6, as the network's history went (contract kinds, which need sidecars, only run in v6 files).
    ``upgrade_freezes``: the freezes schedule upgrades (FREEZE_UPGRADE) rather than prepare them.
    ``evm_contracts``: the mix also deploys and calls contracts the EVM runs (:mod:`.evm_tokens`)."""
    _check(nodes, seconds, tps, layout, fmt, record_version)
    began = time.perf_counter()
    node_keys = [keys.node_private_key(seed, node_id) for node_id in range(nodes)]
    seconds_keys = time.perf_counter() - began
    protos = hapi.load()
    node_accounts = [system.FIRST_NODE_ACCOUNT + node_id for node_id in range(nodes)]
    rng = random.Random(int.from_bytes(hashlib.sha256(f"ledgermirror-simulator:mix:{seed}".encode()).digest()))
    genesis = genesis_balances(node_accounts)
    ledger = Ledger(balances=dict(genesis), upgrade_freezes=upgrade_freezes)
    em = Emitter(protos, ledger, rng, node_accounts)
    book = system.address_book(protos, [key.public_key() for key in node_keys])
    folders = _prepare(out, node_accounts, node_keys, book, layout)
    (out / INITIAL_BALANCES).write_bytes(_balance_snapshot(protos, genesis, start - 1))
    file_count = max(1, seconds // FILE_SECONDS)
    first_block = {"records": file_count, "blocks": 0, "native": 0, "cutover": max(1, file_count // 2)}[fmt]
    output = _Output(out, folders, node_keys, seed, first_block, fmt)
    mix = Mix(em, evm_contracts=evm_contracts)
    _bootstrap(mix, book, nodes)
    running = hashlib.sha384(f"ledgermirror-simulator:genesis:{seed}".encode()).digest()
    written = sidecars = 0
    names: list[str] = []
    listed: list[dict[str, Any]] = []
    per_file = tps * FILE_SECONDS
    gap = FILE_SECONDS * 1_000_000_000 // per_file
    balances_out = BalanceFiles(start, folders, node_keys)
    for index in range(file_count):
        file_start = start + index * FILE_SECONDS * 1_000_000_000
        _schedule_system_work(mix, protos, node_keys, index, file_count)
        previous_start = file_start - FILE_SECONDS * 1_000_000_000
        if index > 0 and file_start // system.NANOS_PER_DAY != previous_start // system.NANOS_PER_DAY:
            mix.scripted.append(lambda em: system.node_stake_update(em, nodes))  # the new staking day
        em.new_file()
        em.block_number = index
        version = file_version(record_version, index, file_count)
        em.sidecars_allowed = version == stream_files.RECORD_FILE_VERSION
        for slot in range(per_file):
            em.start(file_start + slot * gap + 1 + rng.randrange(max(gap // 2, 1)))
            mix.step()
        items, em.items = em.items, []
        data = _record_file(protos, items, running, index, version)
        running = data.end_running_hash
        written += output.write(index, data, items)
        if fmt == "records":  # the state after the file
            balances_out.after_file(protos, ledger, items[-1].consensus_timestamp)
        sidecars += data.sidecar is not None
        names.append(data.name)
        listed.append(
            {
                "name": names[-1],
                "block_number": data.block_number,
                "count": len(items),
                "size": len(data.stored),
                "hash": data.end_running_hash.hex(),
                "previous_hash": data.start_running_hash.hex(),
                "file_hash": data.file_hash.hex(),
                "consensus_start": items[0].consensus_timestamp,
                "consensus_end": items[-1].consensus_timestamp,
                "sidecar": data.sidecar is not None,
                "version": data.version,
            }
        )
    network = {
        "seed": seed,
        "nodes": [
            {"node_id": i, "account": hapi.entity(account), "stake": system.NODE_STAKE_TOTAL // nodes}
            for i, account in enumerate(node_accounts)
        ],
        "hapi_version": ".".join(map(str, HAPI_VERSION)),
        "start": start,
        "seconds": seconds,
        "tps": tps,
        "address_book": "addressbook.bin",
        "initial_balances": INITIAL_BALANCES,
        "balance_files": balances_out.names,
        "layout": layout,
        "record_version": record_version,
        "folders": [str(folder.relative_to(out)) for folder in folders],
        "format": fmt,
        **({"evm_contracts": True} if evm_contracts else {}),
    }
    files = {
        "count": len(names),
        "first": names[0],
        "last": names[-1],
        "first_block": 0,
        "sidecars": sidecars,
        "files": listed,
        "first_wrapped_block": first_block if first_block < file_count else None,
    }
    document = truth.truth(em, network, files, genesis)
    (out / "truth.json").write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
    return Summary(out, len(names), em.transactions, sidecars, written, seconds_keys, time.perf_counter() - began)


def _check(nodes: int, seconds: int, tps: int, layout: str, fmt: str, record_version: str) -> None:  # noqa: PLR0917
    if nodes < 1 or seconds < 1 or tps < 1:
        raise ValueError("nodes, seconds and tps must be positive")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    if record_version not in RECORD_VERSIONS:
        raise ValueError(f"record version must be one of {', '.join(RECORD_VERSIONS)}")
    if record_version != "6" and fmt == "native":
        raise ValueError("native blocks carry no record file version (--record-version 6 only)")


def _record_file(
    protos: Any, items: list[StreamItem], running: bytes, index: int, version: int
) -> stream_files.RecordFileBytes:
    if version == 2:
        return stream_files.record_file_v2(items, running, index)
    if version == 5:
        return stream_files.record_file_v5(items, running, index, HAPI_VERSION)
    sidecar = stream_files.sidecar_file(protos, items)
    return stream_files.record_file(items, running, index, HAPI_VERSION, sidecar)


def file_version(record_version: str, index: int, count: int) -> int:
    """The record file version of file ``index`` of ``count``."""
    if record_version != MIXED_VERSIONS:
        return int(record_version)
    if index < count // 3:
        return 2
    return 5 if index < 2 * count // 3 else stream_files.RECORD_FILE_VERSION


class _Output:
    """Writes each file as a record file (with its signature files), a wrapped record block or a native block."""

    def __init__(  # noqa: PLR0917
        self,
        out: Path,
        folders: list[Path],
        node_keys: list[rsa.RSAPrivateKey],
        seed: int,
        first_block: int,
        fmt: str,
    ) -> None:
        self.out, self.folders, self.node_keys, self.seed = out, folders, node_keys, seed
        self.first_block = first_block
        self.fmt = fmt
        self.previous_root = bytes(block_files.HASH_LENGTH)

    def write(self, index: int, data: stream_files.RecordFileBytes, items: list[StreamItem]) -> int:
        block = None
        if self.fmt == "native":
            block = native_blocks.native_block(
                items,
                data.block_number,
                previous_root=self.previous_root,
                hapi_version=HAPI_VERSION,
                seed=self.seed,
            )
        elif self.fmt != "records":  # every file's block, so the chain of root hashes starts at the first file
            block = block_files.wrapped_block(
                data,
                items,
                previous_root=self.previous_root,
                node_keys=self.node_keys,
                hapi_version=HAPI_VERSION,
                seed=self.seed,
            )
        if block is not None:
            self.previous_root = block.root_hash
        if block is None or index < self.first_block:
            return _write(self.folders, self.node_keys, data)
        return block_files.write_block(self.out, block)


def _balance_snapshot(protos: Any, genesis: dict[int, int], consensus_timestamp: int) -> bytes:
    """The genesis balances as an ``AllAccountBalances`` (a ``*_Balances.pb.gz`` file's content), gzipped."""
    module = importlib.import_module("hiero_sdk_python.hapi.streams.account_balance_file_pb2")
    snapshot = module.AllAccountBalances()
    hapi.set_timestamp(snapshot.consensusTimestamp, consensus_timestamp)
    for num, balance in genesis.items():
        snapshot.allAccounts.add(accountID=protos.basic.AccountID(accountNum=num), hbarBalance=balance)
    return gzip.compress(snapshot.SerializeToString(), mtime=0)


def _prepare(
    out: Path, accounts: list[int], node_keys: list[rsa.RSAPrivateKey], book: bytes, layout: str
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "addressbook.bin").write_bytes(book)
    (out / "keys").mkdir(exist_ok=True)
    folders = []
    for node_id, (account, key) in enumerate(zip(accounts, node_keys, strict=True)):
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        (out / "keys" / f"node{node_id}.pem").write_bytes(pem)
        if layout == ACCOUNT_LAYOUT:
            folder = out / "recordstreams" / f"record0.0.{account}"
        else:
            folder = out / NETWORK_NAME / "0" / str(node_id) / "record"
        (folder / "sidecar").mkdir(parents=True, exist_ok=True)
        folders.append(folder)
    return folders


def _write(folders: list[Path], node_keys: list[rsa.RSAPrivateKey], data: stream_files.RecordFileBytes) -> int:
    written = 0
    for folder, key in zip(folders, node_keys, strict=True):
        signature = stream_files.signature_file_for(key, data)
        (folder / data.name).write_bytes(data.stored)
        (folder / f"{data.stem}.rcd_sig").write_bytes(signature)
        written += len(data.stored) + len(signature)
        if data.sidecar is not None:
            (folder / "sidecar" / f"{data.stem}_{stream_files.SIDECAR_ID:02d}.rcd.gz").write_bytes(
                data.sidecar.stored
            )
            written += len(data.sidecar.stored)
    return written


def _bootstrap(mix: Mix, book: bytes, nodes: int) -> None:
    """The first slots: the day's stake update, the address book and exchange rates into the files, then
    0.0.2 funds the first user accounts."""
    mix.scripted.append(lambda em: system.node_stake_update(em, nodes))
    mix.scripted.append(lambda em: system.update_address_book(em, book))
    mix.scripted.append(lambda em: system.update_exchange_rates(em, 5))
    mix.scripted.append(staking.fund_reward_account)
    for _ in range(BOOTSTRAP_ACCOUNTS):
        mix.scripted.append(_fund_user)


def _fund_user(em: Emitter) -> None:
    crypto.create_account(em, funder=TREASURY, initial=em.rng.randrange(10_000, 1_000_000) * HBAR)


def _schedule_system_work(
    mix: Mix, protos: Any, node_keys: list[rsa.RSAPrivateKey], index: int, count: int
) -> None:
    if index == count // 3 and index > 0:
        mix.scripted.append(system.update_fee_schedule)
    if index == count // 2 and index > 0:
        book = system.address_book(protos, [key.public_key() for key in node_keys], revision=1)
        mix.scripted.append(lambda em: system.update_address_book(em, book))
    if index % EXCHANGE_RATE_EVERY_FILES == 0 and index > 0:
        mix.scripted.append(lambda em: system.update_exchange_rates(em, 5 + index // EXCHANGE_RATE_EVERY_FILES))
