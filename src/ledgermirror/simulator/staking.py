"""Staking reward payouts: after a daily stake update closes a staking period, an account staked to a node
(and not declining rewards) created before that period ended is paid one reward for it (its whole hbar times
the period's reward rate) the next time a transfer it sends or receives touches it: 0.0.800 pays it, in the
transfer list and in the record's ``paid_staking_rewards``. (The network pays only stakes held the whole
period, pro rata; a run shorter than two days would then pay nothing.)"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import STAKING_REWARD_ACCOUNT, TREASURY
from ledgermirror.simulator.picks import HBAR

REWARD_ACCOUNT_FUNDS = 50_000_000 * HBAR
"""What 0.0.2 moves to 0.0.800 at the start, to pay rewards from."""


def payouts(em: Emitter, accounts: Iterable[int], record: Any) -> dict[int, int]:
    """The reward movements for the accounts owed one (added to ``record``), marking them paid."""
    ledger = em.ledger
    period = ledger.reward_period_end
    moves: dict[int, int] = {}
    if period is None or not ledger.reward_rate:
        return moves
    for num in sorted(set(accounts)):
        account = ledger.accounts.get(num)
        if (
            account is None
            or account.deleted
            or account.staked_node_id is None
            or account.decline_reward
            or account.created_timestamp is None
            or account.created_timestamp >= period
            or account.rewarded_period == period
        ):
            continue
        reward = ledger.balance(num) // HBAR * ledger.reward_rate
        if not reward or ledger.balance(STAKING_REWARD_ACCOUNT) - sum(moves.values()) < reward:
            continue
        account.rewarded_period = period
        moves[num] = reward
        record.paid_staking_rewards.add(accountID=em.account_id(num), amount=reward)
        ledger.staking_rewards[num] = ledger.staking_rewards.get(num, 0) + reward
    if moves:
        moves[STAKING_REWARD_ACCOUNT] = -sum(moves.values())
    return moves


def fund_reward_account(em: Emitter) -> None:
    """0.0.2 moves the reward pool to 0.0.800 (scripted at the start)."""
    moves = {TREASURY: -REWARD_ACCOUNT_FUNDS, STAKING_REWARD_ACCOUNT: REWARD_ACCOUNT_FUNDS}
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    for account in sorted(moves):
        body.transfers.accountAmounts.add(accountID=em.account_id(account), amount=moves[account])
    em.emit(Tx(TREASURY, "cryptoTransfer", body, picks.fee(em, "cryptoTransfer"), hbar=moves))
