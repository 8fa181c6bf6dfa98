"""Signature evidence of the units a transaction accepts: which nodes of the address book in force signed each
record file or block validly, whose signature was present but failed, and whose was missing. Gathered as units
are accepted and appended (``db/evidence``) in the same transaction, so it commits with them."""

from __future__ import annotations

import time
from typing import Any

import asyncpg

from ledgermirror.db import evidence
from ledgermirror.importer.address_book import AddressBook
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.verify import Consensus


def evidence_record(
    record: RecordFile, consensus: Consensus, book: AddressBook, imported_at: int
) -> tuple[Any, ...]:
    """One ``signature_evidence`` record: valid = the nodes that signed the hash the file has; failed = those
    whose signature did not verify or signed another hash; missing = the other book nodes."""
    valid = next((group.node_ids for group in consensus.agreed if group.file_hash == record.file_hash), ())
    signed = set(valid)
    failed = {node for node in consensus.failed_nodes} | {
        node for node in consensus.verified_nodes if node not in signed
    }
    book_nodes = [entry.node_id for entry in book.nodes]
    failed_in_book = [node for node in book_nodes if node in failed]
    missing = [node for node in book_nodes if node not in signed and node not in failed]
    return (record.consensus_end, record.name, imported_at, list(valid), failed_in_book, missing)


class EvidenceRows:
    """The evidence of one transaction's units, appended before it commits."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []

    def add(self, record: RecordFile, consensus: Consensus | None, book: AddressBook) -> None:
        """A unit's evidence; none for a unit without per-node signatures."""
        if consensus is not None:
            self.records.append(evidence_record(record, consensus, book, time.time_ns()))

    async def write(self, conn: asyncpg.Connection[Any]) -> int:
        records, self.records = self.records, []
        return await evidence.append(conn, records)
