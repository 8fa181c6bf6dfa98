"""No simulated account pays more than it holds, as the network refuses (INSUFFICIENT_PAYER_BALANCE,
INSUFFICIENT_ACCOUNT_BALANCE): an EVM wallet is created only by a payer holding its initial balance and fee,
the emitter refuses a transaction that would overdraw an account, and a stream whose first such wallet used
to overdraw its payer (seed 1, 30 s at 100 TPS; its balances then went negative and every balance file of a
stream of 900 s or more could not be written) ends with every balance at zero or more."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ledgermirror.simulator import ethereum, hapi, picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import TREASURY, Ledger, genesis_balances
from ledgermirror.simulator.picks import HBAR
from ledgermirror.simulator.run import DEFAULT_START, simulate

NODE = 3
PAYER = 1001
"""The first user account."""
HELD = 2000 * HBAR
"""Above the 500 hbar a wallet's payer must hold, below most initial balances (100 to 5,000 hbar)."""


def _emitter(seed: int) -> Emitter:
    ledger = Ledger(balances=genesis_balances([NODE]))
    em = Emitter(hapi.load(), ledger, random.Random(seed), [NODE])
    picks.add_user(em, ledger.new_num(), picks.ed25519_key(em), DEFAULT_START)
    ledger.move(TREASURY, -HELD)
    ledger.move(PAYER, HELD)
    return em


@pytest.mark.parametrize("seed", range(6))
def test_an_evm_wallet_is_funded_only_by_a_payer_that_holds_its_initial_balance(seed: int) -> None:
    em = _emitter(seed)
    supply = sum(em.ledger.balances.values())
    for attempt in range(20):
        em.start(DEFAULT_START + (attempt + 1) * 1_000_000_000)
        before = dict(em.ledger.balances)
        if not ethereum.create_ecdsa_account(em):
            assert em.ledger.balances == before  # nothing emitted, nothing charged
        assert {num: balance for num, balance in em.ledger.balances.items() if balance < 0} == {}
    assert sum(em.ledger.balances.values()) == supply
    assert em.ledger.ecdsa_accounts  # some payer could afford one


def test_the_emitter_refuses_a_transaction_that_overdraws_an_account() -> None:
    em = _emitter(0)
    em.start(DEFAULT_START + 1_000_000_000)
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    before = dict(em.ledger.balances)
    with pytest.raises(AssertionError, match="overdraws"):
        em.emit(Tx(PAYER, "cryptoTransfer", body, 200_000, hbar={PAYER: -HELD, TREASURY: HELD}))
    assert em.ledger.balances == before
    assert em.items == []


def test_a_stream_ends_with_no_negative_balance(tmp_path: Path) -> None:
    simulate(tmp_path, nodes=1, seconds=30, tps=100, seed=1)
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert any(account["memo"] == "evm wallet" for account in truth["accounts"].values())
    assert {account: balance for account, balance in truth["balances"].items() if balance < 0} == {}
