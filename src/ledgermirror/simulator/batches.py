"""Atomic batches (HIP-551): a batch key holder submits two or three hbar transfers of other payers as one
batch. The batch's record charges its own fee; each inner transaction follows as a child record (parent =
the batch) with its own payer, valid start, fee and transfers, its body carrying the batch key."""

from __future__ import annotations

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.picks import HBAR


def atomic_batch(em: Emitter) -> bool:
    ledger = em.ledger
    submitter = picks.payer(em, 50 * HBAR)
    if submitter is None:
        return False
    batch_key = ledger.accounts[submitter].key
    inner: list[Tx] = []
    for _ in range(em.rng.choice((2, 2, 3))):
        sender = picks.payer(em, 20 * HBAR, exclude=tuple(tx.payer for tx in inner))
        receiver = picks.other_user(em, sender or 0)
        if sender is None or receiver is None:
            return False
        amount = em.rng.randrange(1, 10) * HBAR
        body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
        moves = {sender: -amount, receiver: amount}
        for account in sorted(moves):
            body.transfers.accountAmounts.add(accountID=em.account_id(account), amount=moves[account])
        fee = picks.fee(em, "cryptoTransfer")
        inner.append(
            Tx(
                sender,
                "cryptoTransfer",
                body,
                fee,
                hbar=moves,
                memo="batched payment",
                valid_start=em.valid_start(sender, em.peek()),
                max_fee=fee * 2,
                batch_key=batch_key,
            )
        )
    for tx in inner:
        tx.signed = em.inner_signed(tx)
    batch_body = em.hapi.transaction.AtomicBatchTransactionBody(transactions=[tx.signed for tx in inner])
    parent = em.emit(Tx(submitter, "atomic_batch", batch_body, picks.fee(em, "atomicBatch")))
    for tx in inner:
        tx.parent = parent
        em.emit(tx)
    ledger.batches += 1
    return True
