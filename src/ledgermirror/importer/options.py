"""The options of an import run (``ledgermirror import``), shared by the record and the block paths."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from pathlib import Path

from ledgermirror.importer.balance_snapshots import SnapshotRules

DEFAULT_SNAPSHOT_RULES = SnapshotRules()

DEFAULT_FILES_PER_TRANSACTION = 50


@dataclass(frozen=True, slots=True)
class ImportOptions:
    once: bool = False
    start: int | None = None
    """Nanoseconds: on an empty database, the first file imported is the first at or after it."""
    end: int | None = None
    """Nanoseconds: stop after the last file at or before it."""
    address_book: Path | None = None
    initial_balances: Path | None = None
    """An ``AllAccountBalances`` snapshot (``*_Balances.pb[.gz]``) seeded into an empty database with the first
    file, so genesis accounts get balances."""
    files_per_transaction: int = DEFAULT_FILES_PER_TRANSACTION
    items_per_transaction: int = 20_000
    list_limit: int = 1_000
    prefetch_files: int = 8
    """Files downloaded ahead of verification (their bytes only: nothing is trusted before it is checked)."""
    list_every_node: bool | None = None
    """List every node's folder (True), or only the heaviest third plus one and read the others' signature
    files by name (False); None: every node for a folder, the third for a bucket (LIST requests cost ten GETs)."""
    poll_seconds: float = 1.0
    max_poll_seconds: float = 30.0
    entity_transactions: bool = False
    synthetic_log_evm_lookup: bool = True
    """Synthetic ``Transfer`` logs get their parties' EVM addresses and a real bloom at the end of each file
    (``LEDGERMIRROR_IMPORT_SYNTHETIC_LOG_EVM_LOOKUP``, the reference's
    ``persist.syntheticContractLogEvmAddressLookup``)."""
    balance_snapshots: SnapshotRules | None = DEFAULT_SNAPSHOT_RULES
    """Balance snapshots while importing (``importer/balance_snapshots.py``); None: none."""
    balance_files: bool = False
    """An empty database starts from the network's verified account balance file nearest at or before the start
    (``importer/balance_files.py``)."""
    require_verified_proofs: bool = False
    """Blocks: refuse a block whose proof cannot be verified here (TSS, state proofs) instead of accepting it
    as chain-verified only."""
    network: str | None = None
    """``mainnet`` applies mainnet's errata, another name never; None: when the address book is mainnet's."""
    overlap: bool = False
    """Build the next transaction's rows while this one is written (``LEDGERMIRROR_IMPORT_OVERLAP``;
    ``importer/overlap.py``); False: one after the other."""


def parse_date(text: str) -> int:
    """``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS[.f]]Z`` (UTC) as nanoseconds since the epoch."""
    cleaned = text.strip().rstrip("Z").replace(" ", "T")
    day, _, clock = cleaned.partition("T")
    year, month, date = (int(part) for part in day.split("-"))
    parts = clock.split(":") if clock else []
    hour = int(parts[0]) if parts else 0
    minute = int(parts[1]) if len(parts) > 1 else 0
    second_text = parts[2] if len(parts) > 2 else "0"
    whole, _, fraction = second_text.partition(".")
    seconds = calendar.timegm((year, month, date, hour, minute, int(whole), 0, 0, 0))
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0")[:9] or 0)
