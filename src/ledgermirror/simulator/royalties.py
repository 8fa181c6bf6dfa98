"""Royalty fees of NFT classes: a fraction of the hbar a buyer pays for a serial goes to the collector (paid
by the seller); a serial given away (no hbar exchanged) costs its receiver the fallback fee instead. The
treasury and the collector are exempt."""

from __future__ import annotations

from typing import Any

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter
from ledgermirror.simulator.ledger_state import Royalty, Token
from ledgermirror.simulator.picks import HBAR


def add_royalty(em: Emitter, token: Token, body: Any) -> None:
    """A royalty fee of 1 to 10 % with an hbar fallback fee, to a collector other than the treasury."""
    collector = picks.other_user(em, token.treasury)
    if collector is None:
        return
    royalty = Royalty(collector, em.rng.randrange(1, 11), 100, em.rng.randrange(1, 10) * HBAR // 10)
    fee = body.custom_fees.add(fee_collector_account_id=em.account_id(collector))
    fee.royalty_fee.exchange_value_fraction.numerator = royalty.numerator
    fee.royalty_fee.exchange_value_fraction.denominator = royalty.denominator
    fee.royalty_fee.fallback_fee.amount = royalty.fallback
    token.royalty = royalty
    em.ledger.accounts[collector].pinned = True


def charge(
    em: Emitter, token: Token, owner: int, receiver: int, *, body: Any, record: Any
) -> dict[int, int] | None:
    """The hbar movements of an NFT transfer of ``token`` (empty without a royalty), with the assessed fee
    in ``record``; ``None`` when the party who would pay cannot."""
    royalty = token.royalty
    if royalty is None or owner in (token.treasury, royalty.collector):
        return {}
    ledger = em.ledger
    if em.rng.random() < 0.5:  # a sale
        price = em.rng.randrange(1, 50) * HBAR
        if ledger.balance(receiver) < price + HBAR:
            return None
        fee = price * royalty.numerator // royalty.denominator
        for account, amount in sorted({receiver: -price, owner: price}.items()):
            body.transfers.accountAmounts.add(accountID=em.account_id(account), amount=amount)
        payer = owner
        moves = {receiver: -price, owner: price - fee}
    else:  # a gift: the receiver pays the fallback fee
        if receiver == royalty.collector:
            return {}
        fee = royalty.fallback
        if ledger.balance(receiver) < fee + HBAR:
            return None
        payer = receiver
        moves = {receiver: -fee}
    moves[royalty.collector] = moves.get(royalty.collector, 0) + fee
    assessed = record.assessed_custom_fees.add(
        amount=fee, fee_collector_account_id=em.account_id(royalty.collector)
    )
    assessed.effective_payer_account_id.add(accountNum=payer)
    return moves
