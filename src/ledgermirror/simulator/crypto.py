"""Crypto service generators: transfers (plain, approved, to a new alias with its auto-creation child,
failed), account create/update/delete and allowances."""

from __future__ import annotations

from typing import Any

from ledgermirror.simulator import picks, staking
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import Token
from ledgermirror.simulator.picks import HBAR

_MEMO_WORDS = ("payroll", "invoice", "refund", "gift", "rent", "coffee", "settlement", "", "tip", "order")
AUTO_RENEW_SECONDS = 7_776_000


def transfer(em: Emitter) -> bool:
    sender = picks.payer(em, 10 * HBAR)
    if sender is None:
        return False
    receivers = {picks.other_user(em, sender) for _ in range(em.rng.choice((1, 1, 1, 2, 3)))}
    receivers.discard(None)
    if not receivers:
        return False
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    budget = em.ledger.balance(sender) // 100
    moves: dict[int, int] = {}
    for receiver in sorted(r for r in receivers if r is not None):
        amount = max(1, em.rng.randrange(1, 1000) * 10 ** em.rng.randrange(2, 8) % max(budget, 2))
        moves[receiver] = amount
    moves[sender] = -sum(moves.values())
    for account in sorted(moves):
        body.transfers.accountAmounts.add(accountID=em.account_id(account), amount=moves[account])
    record = em.new_record()
    hbar = dict(moves)
    for account, reward in staking.payouts(em, moves, record).items():
        hbar[account] = hbar.get(account, 0) + reward
    em.emit(Tx(sender, "cryptoTransfer", body, picks.fee(em, "cryptoTransfer"), hbar=hbar, memo=_memo(em)), record)
    return True


def failed_transfer(em: Emitter) -> bool:
    """A transfer of more than the sender holds (INSUFFICIENT_ACCOUNT_BALANCE), or one whose payer cannot
    cover its maximum fee (INSUFFICIENT_PAYER_BALANCE): only the fee moves."""
    sender = picks.payer(em, HBAR)
    receiver = picks.other_user(em, sender or 0)
    if sender is None or receiver is None:
        return False
    status = em.rng.choice(("INSUFFICIENT_ACCOUNT_BALANCE", "INSUFFICIENT_PAYER_BALANCE"))
    amount = em.ledger.balance(sender) + em.rng.randrange(1, 1000) * HBAR
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    body.transfers.accountAmounts.add(accountID=em.account_id(sender), amount=-amount)
    body.transfers.accountAmounts.add(accountID=em.account_id(receiver), amount=amount)
    max_fee = em.ledger.balance(sender) + HBAR if status == "INSUFFICIENT_PAYER_BALANCE" else None
    em.emit(Tx(sender, "cryptoTransfer", body, picks.fee(em, "cryptoTransfer"), status=status, max_fee=max_fee))
    return True


def approved_transfer(em: Emitter) -> bool:
    """A spender moves hbar out of an owner's account within its allowance."""
    ledger = em.ledger

    def usable(pair: tuple[int, int]) -> bool:
        left = ledger.crypto_allowances[pair][1]
        return left > 0 and not ledger.accounts[pair[1]].deleted and ledger.balance(pair[1]) >= HBAR

    pair = picks.sample(em, ledger.crypto_allowance_keys, usable)
    if pair is None:
        return False
    owner, spender = pair
    allowance = ledger.crypto_allowances[pair]
    left = allowance[1]
    receiver = picks.other_user(em, owner)
    amount = min(left, ledger.balance(owner) // 10, em.rng.randrange(1, 100) * HBAR // 10)
    if receiver is None or amount <= 0:
        return False
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    moves = {owner: -amount, receiver: amount}
    for account in sorted(moves):
        body.transfers.accountAmounts.add(
            accountID=em.account_id(account), amount=moves[account], is_approval=account == owner
        )
    allowance[1] -= amount
    em.emit(Tx(spender, "cryptoTransfer", body, picks.fee(em, "cryptoTransfer"), hbar=moves))
    return True


def transfer_to_alias(em: Emitter) -> bool:
    """Hbar sent to a key alias nobody uses yet: the network creates the account in a child record."""
    sender = picks.payer(em, 200 * HBAR)
    if sender is None:
        return False
    alias = picks.ed25519_key(em)
    num = em.ledger.new_num()
    amount = em.rng.randrange(1, 50) * HBAR
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    body.transfers.accountAmounts.add(accountID=em.account_id(sender), amount=-amount)
    body.transfers.accountAmounts.add(accountID=em.hapi.basic.AccountID(alias=alias), amount=amount)
    parent = em.emit(
        Tx(
            sender,
            "cryptoTransfer",
            body,
            picks.fee(em, "cryptoTransferAlias"),
            hbar={sender: -amount, num: amount},
        )
    )
    create = em.hapi.bodies["crypto_create"].CryptoCreateTransactionBody(
        key=picks.key_message(em, alias), memo="auto-created account", alias=alias
    )
    create.autoRenewPeriod.seconds = AUTO_RENEW_SECONDS
    record = em.new_record()
    record.receipt.accountID.accountNum = num
    record.alias = alias
    child = em.emit(Tx(sender, "cryptoCreateAccount", create, 0, memo="", nonce=1, parent=parent), record)
    picks.add_user(em, num, alias, child, alias=alias, memo="auto-created account")
    return True


def create_account(em: Emitter, funder: int | None = None, initial: int | None = None) -> bool:
    payer = funder if funder is not None else picks.payer(em, 500 * HBAR)
    if payer is None:
        return False
    initial = initial if initial is not None else em.ledger.balance(payer) // em.rng.randrange(10, 40)
    key = picks.ed25519_key(em)
    body = em.hapi.bodies["crypto_create"].CryptoCreateTransactionBody(
        key=picks.key_message(em, key),
        initialBalance=initial,
        memo=_memo(em),
        max_automatic_token_associations=em.rng.choice((0, 0, 10, -1)),
    )
    body.autoRenewPeriod.seconds = AUTO_RENEW_SECONDS
    staked = em.rng.randrange(len(em.node_accounts)) if em.rng.random() < 0.3 else None
    if staked is not None:
        body.staked_node_id = staked
    num = em.ledger.new_num()
    record = em.new_record()
    record.receipt.accountID.accountNum = num
    fee = picks.fee(em, "cryptoCreateAccount")
    stamp = em.emit(Tx(payer, "cryptoCreateAccount", body, fee, hbar={payer: -initial, num: initial}), record)
    picks.add_user(
        em,
        num,
        key,
        stamp,
        memo=body.memo,
        max_automatic_token_associations=body.max_automatic_token_associations,
        staked_node_id=staked,
    )
    return True


def update_account(em: Emitter) -> bool:
    num = picks.payer(em, HBAR)
    if num is None:
        return False
    account = em.ledger.accounts[num]
    body = em.hapi.bodies["crypto_update"].CryptoUpdateTransactionBody(accountIDToUpdate=em.account_id(num))
    new_memo = f"updated {_memo(em)}".strip()
    body.memo.value = new_memo
    staked = em.rng.randrange(len(em.node_accounts)) if em.rng.random() < 0.5 else None
    if staked is not None:
        body.staked_node_id = staked
    decline = em.rng.random() < 0.2
    body.decline_reward.value = decline
    em.emit(Tx(num, "cryptoUpdateAccount", body, picks.fee(em, "cryptoUpdateAccount")))
    account.memo = new_memo
    account.decline_reward = decline
    if staked is not None:
        account.staked_node_id = staked
    return True


def delete_account(em: Emitter) -> bool:
    """An account with nothing but hbar closes itself; what it holds after the fee goes to an obtainer."""
    ledger = em.ledger
    candidates = [n for n in ledger.users[-50:] if not ledger.accounts[n].pinned and ledger.balance(n) > HBAR]
    if len(candidates) < 1 or len(ledger.users) < 10:
        return False
    num = em.rng.choice(candidates)
    obtainer = picks.other_user(em, num)
    if obtainer is None:
        return False
    fee = picks.fee(em, "cryptoDelete")
    rest = ledger.balance(num) - fee
    body = em.hapi.bodies["crypto_delete"].CryptoDeleteTransactionBody(
        deleteAccountID=em.account_id(num), transferAccountID=em.account_id(obtainer)
    )
    em.emit(Tx(num, "cryptoDelete", body, fee, hbar={num: -rest, obtainer: rest}))
    ledger.delete_user(num)
    ledger.accounts[num].obtainer = obtainer
    return True


ALLOWANCE_KINDS = ("hbar", "token", "nft_all", "nft_serial")


def approve_allowance(em: Emitter, kind: str | None = None) -> bool:
    """One allowance per transaction: hbar, a fungible token the owner holds, or an NFT class (all serials)
    or one serial the owner holds (``kind`` forces one of :data:`ALLOWANCE_KINDS`)."""
    ledger = em.ledger
    kind = kind or em.rng.choice(ALLOWANCE_KINDS)
    owner, token = _allowance_owner(em, kind)
    spender = picks.other_user(em, owner or 0)
    if owner is None or spender is None:
        return False
    body = em.hapi.bodies["crypto_approve_allowance"].CryptoApproveAllowanceTransactionBody()
    if token is None:
        amount = em.rng.randrange(1, 100) * HBAR
        body.cryptoAllowances.add(owner=em.account_id(owner), spender=em.account_id(spender), amount=amount)
        if (owner, spender) not in ledger.crypto_allowances:
            ledger.crypto_allowance_keys.append((owner, spender))
        ledger.crypto_allowances[(owner, spender)] = [amount, amount]
    else:
        token_id = em.hapi.basic.TokenID(tokenNum=token.num)
        if token.fungible:
            amount = em.rng.randrange(1, token.balances[owner] + 1)
            body.tokenAllowances.add(
                tokenId=token_id, owner=em.account_id(owner), spender=em.account_id(spender), amount=amount
            )
            ledger.token_allowances[(owner, spender, token.num)] = [amount, amount]
        else:
            entry = body.nftAllowances.add(
                tokenId=token_id, owner=em.account_id(owner), spender=em.account_id(spender)
            )
            owned = [s for s in token.live_serials if token.nfts[s].owner == owner]
            if kind == "nft_all" or not owned:
                entry.approved_for_all.value = True
                ledger.nft_allowances[(owner, spender, token.num)] = True
            else:
                serial = em.rng.choice(owned)
                entry.serial_numbers.append(serial)
                token.nfts[serial].spender = spender
                ledger.nft_serial_allowances.append((token.num, serial))
    em.emit(Tx(owner, "cryptoApproveAllowance", body, picks.fee(em, "cryptoApproveAllowance")))
    ledger.accounts[owner].pinned = ledger.accounts[spender].pinned = True
    return True


def _allowance_owner(em: Emitter, kind: str) -> tuple[int | None, Token | None]:
    """An owner for that kind of allowance and the token: a holder of such a token when one is found, else
    an hbar allowance's owner and no token."""
    ledger = em.ledger
    if kind != "hbar":
        token = picks.sample(
            em, ledger.fungible if kind == "token" else ledger.nft_classes, lambda t: not t.regulated
        )
        if token is not None:
            holder = picks.sample(
                em, token.holders, lambda h: token.balances[h] > 0 and ledger.balance(h) >= 200 * HBAR
            )
            if holder is not None:
                return holder, token
    return picks.payer(em, 200 * HBAR), None


def delete_nft_allowance(em: Emitter) -> bool:
    ledger = em.ledger

    def live(entry: tuple[int, int]) -> bool:
        nft = ledger.tokens[entry[0]].nfts[entry[1]]
        return nft.spender is not None and nft.owner is not None and ledger.balance(nft.owner) >= 200 * HBAR

    entry = picks.sample(em, ledger.nft_serial_allowances, live)
    if entry is None:
        return False
    ledger.nft_serial_allowances.remove(entry)
    token_num, serial = entry
    nft = ledger.tokens[token_num].nfts[serial]
    owner = nft.owner or 0
    body = em.hapi.bodies["crypto_delete_allowance"].CryptoDeleteAllowanceTransactionBody()
    listed = body.nftAllowances.add(owner=em.account_id(owner), serial_numbers=[serial])
    listed.token_id.tokenNum = token_num
    em.emit(Tx(owner, "cryptoDeleteAllowance", body, picks.fee(em, "cryptoDeleteAllowance")))
    nft.spender = None
    return True


def _memo(em: Emitter) -> str:
    return picks.memo(em, _MEMO_WORDS) if em.rng.random() < 0.3 else ""


def account_amounts(em: Emitter, target: Any, moves: dict[int, int]) -> None:
    for account in sorted(moves):
        if moves[account]:
            target.add(accountID=em.account_id(account), amount=moves[account])
