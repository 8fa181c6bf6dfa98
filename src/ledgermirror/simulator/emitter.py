"""Turns what a generator decided into one record stream item: the ``Transaction`` bytes (a
``SignedTransaction`` with its body and a signature map) and the ``TransactionRecord`` bytes, self-consistent
as the network writes them (transaction id, hash, charged fee, sorted and netted transfer list, receipt).

Every hbar movement of a record goes through :meth:`Emitter.emit`, which also applies it to the ledger, so
the state and the records can never disagree.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from ledgermirror.simulator.hapi import Hapi, set_timestamp
from ledgermirror.simulator.ledger_state import FEE_COLLECTOR, Ledger

VALID_DURATION_SECONDS = 120
USED_ID_FILES = 6
NODE_FEE_SHARE = 10
"""The node gets one tenth of a charged fee; 0.0.98 the rest."""


@dataclass(frozen=True, slots=True)
class StreamItem:
    consensus_timestamp: int
    record_bytes: bytes
    transaction_bytes: bytes
    body_name: str
    status: str
    sidecars: tuple[Any, ...]
    """``TransactionSidecarRecord`` messages of this item (contract state changes, actions, bytecode)."""


@dataclass(slots=True)
class Tx:
    """One transaction as a generator decided it; :meth:`Emitter.emit` writes it."""

    payer: int
    body_name: str
    """The ``TransactionBody`` data oneof field, e.g. ``cryptoTransfer``."""
    body: Any
    """The message for that field."""
    fee: int
    """Charged fee in tinybars (0 for privileged system payers)."""
    status: str = "SUCCESS"
    hbar: dict[int, int] = field(default_factory=dict)
    """Hbar movements besides the fee (account → signed amount; must sum to 0)."""
    memo: str = ""
    nonce: int = 0
    parent: int | None = None
    """The parent's consensus timestamp (child records)."""
    scheduled: bool = False
    valid_start: int | None = None
    sidecars: tuple[Any, ...] = ()
    max_fee: int | None = None
    """The body's ``transactionFee`` (the most the payer accepts); by default twice the charged fee."""
    batch_key: bytes | None = None
    """The serialized ``Key`` of the atomic batch this inner transaction belongs to."""
    signed: bytes | None = None
    """The ``SignedTransaction`` bytes when fixed beforehand (an atomic batch lists its inner ones)."""


def _default_max_fee(tx: Tx) -> int:
    return 0 if tx.parent is not None else max(tx.fee * 2, 100_000_000)


class Emitter:
    def __init__(self, hapi: Hapi, ledger: Ledger, rng: random.Random, node_accounts: list[int]) -> None:
        self.hapi = hapi
        self.ledger = ledger
        self.rng = rng
        self.node_accounts = node_accounts
        self.items: list[StreamItem] = []
        self.now = 0
        """Consensus time of the transaction being generated; children take the next nanoseconds."""
        self.offset = 0
        self.used_ids: deque[set[tuple[int, int]]] = deque([set()], maxlen=USED_ID_FILES)
        """(payer, valid start) of the transaction ids of the last files: valid starts lie at most 8 s
        before consensus, so older files cannot collide and are forgotten."""
        self.types: Counter[str] = Counter()
        self.results: Counter[str] = Counter()
        self.transactions = 0
        self._last_top: tuple[int, int, int | None] = (0, 0, None)
        self.sidecars_allowed = True
        """False while a v5 or v2 file is written (they have no sidecars): contract kinds stand aside."""
        self.block_number = 0
        """The index of the record file being written (the EVM's block number)."""
        self.last_signature: tuple[bytes, bytes] = (b"", b"")
        """(public key prefix, ED25519 signature) of the last top-level transaction's signature map."""

    def new_record(self) -> Any:
        return self.hapi.record.TransactionRecord()

    def new_file(self) -> None:
        self.used_ids.append(set())

    def start(self, consensus_timestamp: int) -> None:
        self.now = consensus_timestamp
        self.offset = 0

    def peek(self) -> int:
        """The consensus timestamp the next emitted item gets."""
        return self.now + self.offset

    def next_timestamp(self) -> int:
        stamp = self.now + self.offset
        self.offset += 1
        return stamp

    def account_id(self, num: int) -> Any:
        return self.hapi.basic.AccountID(accountNum=num)

    def emit(self, tx: Tx, record: Any | None = None) -> int:
        """Write the item; returns its consensus timestamp. ``record`` carries the type-specific fields
        (receipt ids, token transfers, results) the generator filled."""
        hapi = self.hapi
        consensus = self.next_timestamp()
        record = record if record is not None else self.new_record()
        node = None
        top_level = tx.parent is None and not tx.scheduled and tx.nonce == 0
        if top_level:
            node = self.rng.choice(self.node_accounts)
            valid_start = tx.valid_start if tx.valid_start is not None else self.valid_start(tx.payer, consensus)
            self._last_top = (tx.payer, valid_start, node)
        else:
            valid_start = tx.valid_start if tx.valid_start is not None else self._last_top[1]
        body = self._body(tx, valid_start, node)
        transaction_id = body.transactionID
        signed = tx.signed if tx.signed is not None else self._signed(body, tx.payer if top_level else None)
        transaction_bytes = hapi.transaction.Transaction(signedTransactionBytes=signed).SerializeToString()

        record.receipt.status = getattr(hapi.codes, tx.status)
        record.transactionHash = hashlib.sha384(signed).digest()
        set_timestamp(record.consensusTimestamp, consensus)
        record.transactionID.CopyFrom(transaction_id)
        record.memo = tx.memo
        record.transactionFee = tx.fee
        if tx.parent is not None:
            set_timestamp(record.parent_consensus_timestamp, tx.parent)
        self._transfer_list(record, tx, node if node is not None else self._last_top[2])
        self.items.append(
            StreamItem(
                consensus,
                record.SerializeToString(),
                transaction_bytes,
                tx.body_name,
                tx.status,
                tx.sidecars,
            )
        )
        self.types[tx.body_name] += 1
        self.results[tx.status] += 1
        self.transactions += 1
        return consensus

    def inner_signed(self, tx: Tx) -> bytes:
        """The signed bytes of an atomic batch's inner transaction (its own payer, valid start and
        signature; no node), fixed before the batch that lists them is emitted."""
        if tx.valid_start is None:
            raise ValueError("an inner transaction needs its valid start")
        return self._signed(self._body(tx, tx.valid_start, None), tx.payer)

    def _body(self, tx: Tx, valid_start: int, node: int | None) -> Any:
        hapi = self.hapi
        transaction_id = hapi.basic.TransactionID(
            accountID=self.account_id(tx.payer), nonce=tx.nonce, scheduled=tx.scheduled
        )
        set_timestamp(transaction_id.transactionValidStart, valid_start)
        body = hapi.transaction.TransactionBody(
            transactionID=transaction_id,
            transactionFee=tx.max_fee if tx.max_fee is not None else _default_max_fee(tx),
            memo=tx.memo,
        )
        if node is not None:
            body.nodeAccountID.accountNum = node
            body.transactionValidDuration.seconds = VALID_DURATION_SECONDS
        if tx.batch_key is not None:
            body.batch_key.CopyFrom(hapi.basic.Key.FromString(tx.batch_key))
        getattr(body, tx.body_name).CopyFrom(tx.body)
        return body

    def valid_start(self, payer: int, consensus: int) -> int:
        """A fresh transaction valid start for ``payer`` a few seconds before ``consensus``."""
        valid_start = consensus - self.rng.randrange(1_000_000_000, 8_000_000_000)
        while any((payer, valid_start) in used for used in self.used_ids):
            valid_start -= 1
        self.used_ids[-1].add((payer, valid_start))
        return valid_start

    def _signed(self, body: Any, payer: int | None) -> bytes:
        contents = self.hapi.contents.SignedTransaction(bodyBytes=body.SerializeToString())
        if payer is not None:
            account = self.ledger.accounts.get(payer)
            prefix = account.key[2:8] if account is not None else payer.to_bytes(6, "big")
            signature = self.rng.randbytes(64)
            contents.sigMap.sigPair.add(pubKeyPrefix=prefix, ed25519=signature)
            self.last_signature = (prefix, signature)
        return bytes(contents.SerializeToString())

    def _transfer_list(self, record: Any, tx: Tx, node: int | None) -> None:
        moves: dict[int, int] = dict(tx.hbar)
        if tx.fee:
            node_part = tx.fee // NODE_FEE_SHARE if node is not None else 0
            moves[tx.payer] = moves.get(tx.payer, 0) - tx.fee
            if node_part and node is not None:
                moves[node] = moves.get(node, 0) + node_part
            moves[FEE_COLLECTOR] = moves.get(FEE_COLLECTOR, 0) + tx.fee - node_part
        if sum(moves.values()) != 0:
            raise AssertionError(f"unbalanced transfers {moves}")
        after = {account: self.ledger.balance(account) + amount for account, amount in moves.items() if amount < 0}
        overdrawn = {account: balance for account, balance in after.items() if balance < 0}
        if overdrawn:  # the network refuses what an account cannot pay: its generator must not emit it
            raise AssertionError(f"{tx.body_name} paid by 0.0.{tx.payer} overdraws {overdrawn}")
        accounts = record.transferList.accountAmounts
        for account in sorted(moves):
            amount = moves[account]
            if amount:
                accounts.add(accountID=self.account_id(account), amount=amount)
                self.ledger.move(account, amount)
