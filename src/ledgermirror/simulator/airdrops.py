"""Airdrops of fungible tokens and NFT serials: straight through (with an automatic association) when the
receiver has free association slots, else pending; pending airdrops are later claimed by the receiver or
cancelled by the sender."""

from __future__ import annotations

from typing import Any

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import Token
from ledgermirror.simulator.picks import HBAR
from ledgermirror.simulator.tokens import associate_account

PENDING = "PENDING"
CLAIMED = "CLAIMED"
CANCELLED = "CANCELLED"


def airdrop(em: Emitter, pending: bool | None = None) -> bool:
    """``pending`` forces a receiver without (``True``) or with (``False``) free association slots."""
    ledger = em.ledger
    token = picks.sample(em, ledger.fungible, lambda t: not t.custom_fees and not t.regulated)
    if token is None:
        return False
    sender = em.rng.choice(token.holders)
    receiver = picks.other_user(em, sender)
    balance = token.balances[sender]
    if receiver is None or receiver in token.balances or balance <= 0 or ledger.balance(sender) < 50 * HBAR:
        return False
    slots = ledger.accounts[receiver].max_automatic_token_associations
    if pending is not None and pending != (slots == 0):
        return False
    amount = em.rng.randrange(1, balance + 1)
    body = em.hapi.bodies["token_airdrop"].TokenAirdropTransactionBody()
    listed = body.token_transfers.add()
    listed.token.tokenNum = token.num
    for account, value in sorted({sender: -amount, receiver: amount}.items()):
        listed.transfers.add(accountID=em.account_id(account), amount=value)
    record = em.new_record()
    if ledger.accounts[receiver].max_automatic_token_associations != 0:
        movement = record.tokenTransferLists.add()
        movement.token.tokenNum = token.num
        for account, value in sorted({sender: -amount, receiver: amount}.items()):
            movement.transfers.add(accountID=em.account_id(account), amount=value)
        association = record.automatic_token_associations.add(account_id=em.account_id(receiver))
        association.token_id.tokenNum = token.num
        em.emit(Tx(sender, "tokenAirdrop", body, picks.fee(em, "tokenAirdrop")), record)
        associate_account(em, token, receiver)
        token.balances[sender] -= amount
        token.balances[receiver] += amount
        return True
    key = (sender, receiver, token.num)
    state = ledger.airdrops.get(key)
    accumulated = amount + (state[0] if state is not None and state[1] == PENDING else 0)
    entry = record.new_pending_airdrops.add()
    _pending_id(entry.pending_airdrop_id, sender, receiver, token)
    entry.pending_airdrop_value.amount = accumulated
    em.emit(Tx(sender, "tokenAirdrop", body, picks.fee(em, "tokenAirdrop")), record)
    if state is None or state[1] != PENDING:
        ledger.pending_airdrops.append(key)
    ledger.airdrops[key] = (accumulated, PENDING)
    ledger.accounts[receiver].pinned = True
    return True


def _pending_id(target: Any, sender: int, receiver: int, token: Token) -> None:
    target.sender_id.accountNum = sender
    target.receiver_id.accountNum = receiver
    target.fungible_token_type.tokenNum = token.num


def claim_or_cancel(em: Emitter) -> bool:
    """The receiver claims a pending airdrop (the tokens move, the receiver is associated) when the sender
    still holds them, else the sender cancels it."""
    ledger = em.ledger
    if ledger.pending_nft_airdrops and (not ledger.pending_airdrops or em.rng.random() < 0.4):
        return settle_nft(em)
    key = picks.sample(em, ledger.pending_airdrops)
    if key is None:
        return False
    sender, receiver, token_num = key
    amount = ledger.airdrops[key][0]
    token = ledger.tokens[token_num]
    claim = token.balances.get(sender, 0) >= amount and receiver not in token.balances
    payer = receiver if claim else sender
    if ledger.balance(payer) < 50 * HBAR:
        return False
    name = "tokenClaimAirdrop" if claim else "tokenCancelAirdrop"
    module = em.hapi.bodies["token_claim_airdrop" if claim else "token_cancel_airdrop"]
    body = (module.TokenClaimAirdropTransactionBody if claim else module.TokenCancelAirdropTransactionBody)()
    _pending_id(body.pending_airdrops.add(), sender, receiver, token)
    record = em.new_record()
    if claim:
        movement = record.tokenTransferLists.add()
        movement.token.tokenNum = token.num
        for account, value in sorted({sender: -amount, receiver: amount}.items()):
            movement.transfers.add(accountID=em.account_id(account), amount=value)
    em.emit(Tx(payer, name, body, picks.fee(em, "tokenAirdrop")), record)
    if claim:
        associate_account(em, token, receiver)
        token.balances[sender] -= amount
        token.balances[receiver] += amount
    ledger.airdrops[key] = (amount, CLAIMED if claim else CANCELLED)
    ledger.pending_airdrops.remove(key)
    return True


def nft_airdrop(em: Emitter, pending: bool | None = None) -> bool:
    """A holder airdrops one serial of a class without royalty (straight through when the receiver has
    free association slots, else pending: the serial stays with the sender until claimed)."""
    ledger = em.ledger
    token = picks.sample(
        em, ledger.nft_classes, lambda t: t.royalty is None and not t.regulated and bool(t.live_serials)
    )
    if token is None:
        return False
    serial = em.rng.choice(token.live_serials)
    nft = token.nfts[serial]
    sender = nft.owner
    receiver = picks.other_user(em, sender or 0)
    if sender is None or receiver is None or receiver in token.balances or ledger.balance(sender) < 50 * HBAR:
        return False
    slots = ledger.accounts[receiver].max_automatic_token_associations
    if pending is not None and pending != (slots == 0):
        return False
    key = (sender, receiver, token.num, serial)
    if ledger.nft_airdrops.get(key) == PENDING:
        return False
    body = em.hapi.bodies["token_airdrop"].TokenAirdropTransactionBody()
    listed = body.token_transfers.add()
    listed.token.tokenNum = token.num
    listed.nftTransfers.add(
        senderAccountID=em.account_id(sender), receiverAccountID=em.account_id(receiver), serialNumber=serial
    )
    record = em.new_record()
    if slots != 0:
        movement = record.tokenTransferLists.add()
        movement.CopyFrom(listed)
        association = record.automatic_token_associations.add(account_id=em.account_id(receiver))
        association.token_id.tokenNum = token.num
        em.emit(Tx(sender, "tokenAirdrop", body, picks.fee(em, "tokenAirdrop")), record)
        associate_account(em, token, receiver)
        _move_serial(token, serial, sender, receiver)
        return True
    entry = record.new_pending_airdrops.add()
    _pending_nft_id(entry.pending_airdrop_id, key)
    em.emit(Tx(sender, "tokenAirdrop", body, picks.fee(em, "tokenAirdrop")), record)
    ledger.nft_airdrops[key] = PENDING
    ledger.pending_nft_airdrops.append(key)
    ledger.accounts[receiver].pinned = True
    return True


def _pending_nft_id(target: Any, key: tuple[int, int, int, int]) -> None:
    sender, receiver, token, serial = key
    target.sender_id.accountNum = sender
    target.receiver_id.accountNum = receiver
    target.non_fungible_token.token_ID.tokenNum = token
    target.non_fungible_token.serial_number = serial


def _move_serial(token: Token, serial: int, sender: int, receiver: int) -> None:
    token.balances[sender] -= 1
    token.balances[receiver] += 1
    token.nfts[serial].owner = receiver
    token.nfts[serial].spender = None


def settle_nft(em: Emitter) -> bool:
    """A pending NFT airdrop claimed by its receiver (the serial moves) when the sender still owns the
    serial, else cancelled by the sender."""
    ledger = em.ledger
    if not ledger.pending_nft_airdrops:
        return False
    key = em.rng.choice(ledger.pending_nft_airdrops)
    sender, receiver, token_num, serial = key
    token = ledger.tokens[token_num]
    claim = token.nfts[serial].owner == sender and receiver not in token.balances
    payer = receiver if claim else sender
    if ledger.balance(payer) < 50 * HBAR:
        return False
    name = "tokenClaimAirdrop" if claim else "tokenCancelAirdrop"
    module = em.hapi.bodies["token_claim_airdrop" if claim else "token_cancel_airdrop"]
    body = (module.TokenClaimAirdropTransactionBody if claim else module.TokenCancelAirdropTransactionBody)()
    _pending_nft_id(body.pending_airdrops.add(), key)
    record = em.new_record()
    if claim:
        movement = record.tokenTransferLists.add()
        movement.token.tokenNum = token_num
        movement.nftTransfers.add(
            senderAccountID=em.account_id(sender), receiverAccountID=em.account_id(receiver), serialNumber=serial
        )
    em.emit(Tx(payer, name, body, picks.fee(em, "tokenAirdrop")), record)
    if claim:
        associate_account(em, token, receiver)
        _move_serial(token, serial, sender, receiver)
    ledger.nft_airdrops[key] = CLAIMED if claim else CANCELLED
    ledger.pending_nft_airdrops.remove(key)
    return True
