"""Token administration: freeze and unfreeze, KYC grant and revoke (of regulated tokens, those created with
freeze, KYC, pause and wipe keys), pause and unpause, wipe (fungible units or an NFT serial), and reject (a
holder sends its units or serial back to the treasury).

A regulated token's holders need a KYC grant before they can receive it (``Token.movable``); the treasury
gets one at creation. Each generator is paid by the token's treasury, which holds its keys here."""

from __future__ import annotations

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import FROZEN, GRANTED, REVOKED, UNFROZEN, Token
from ledgermirror.simulator.picks import HBAR

_STATUS_BODIES = {
    "tokenFreeze": ("token_freeze_account", "TokenFreezeAccountTransactionBody"),
    "tokenUnfreeze": ("token_unfreeze_account", "TokenUnfreezeAccountTransactionBody"),
    "tokenGrantKyc": ("token_grant_kyc", "TokenGrantKycTransactionBody"),
    "tokenRevokeKyc": ("token_revoke_kyc", "TokenRevokeKycTransactionBody"),
}


def _regulated(em: Emitter) -> Token | None:
    return picks.sample(
        em,
        em.ledger.token_list,
        lambda t: (
            t.regulated and not t.paused and len(t.holders) > 1 and em.ledger.balance(t.treasury) >= 50 * HBAR
        ),
    )


def _status(em: Emitter, token: Token, account: int, name: str) -> None:
    module, message = _STATUS_BODIES[name]
    body = getattr(em.hapi.bodies[module], message)(account=em.account_id(account))
    body.token.tokenNum = token.num
    em.emit(Tx(token.treasury, name, body, picks.fee(em, "tokenFreeze")))


def grant_or_revoke_kyc(em: Emitter) -> bool:
    """The treasury grants KYC to a holder without it (mostly), or revokes a holder's."""
    token = _regulated(em)
    if token is None:
        return False
    holder = picks.sample(em, token.holders[1:], lambda a: not em.ledger.accounts[a].deleted)
    if holder is None:
        return False
    granted = token.kyc_status.get(holder) == GRANTED
    if granted and em.rng.random() < 0.7:
        return False
    if granted:
        _status(em, token, holder, "tokenRevokeKyc")
        token.kyc_status[holder] = REVOKED
    else:
        grant_kyc(em, token, holder)
    return True


def grant_kyc(em: Emitter, token: Token, holder: int) -> None:
    _status(em, token, holder, "tokenGrantKyc")
    token.kyc_status[holder] = GRANTED


def freeze_or_unfreeze(em: Emitter) -> bool:
    """The treasury freezes a holder's relationship, or unfreezes a frozen one."""
    token = _regulated(em)
    if token is None:
        return False
    holder = picks.sample(em, token.holders[1:], lambda a: not em.ledger.accounts[a].deleted)
    if holder is None:
        return False
    frozen = token.freeze_status.get(holder) == FROZEN
    _status(em, token, holder, "tokenUnfreeze" if frozen else "tokenFreeze")
    token.freeze_status[holder] = UNFROZEN if frozen else FROZEN
    return True


def pause_or_unpause(em: Emitter) -> bool:
    """A regulated token is paused (nothing moves), or a paused one unpaused."""
    token = picks.sample(
        em, em.ledger.token_list, lambda t: t.regulated and em.ledger.balance(t.treasury) >= 50 * HBAR
    )
    if token is None:
        return False
    name = "token_unpause" if token.paused else "token_pause"
    module = em.hapi.bodies[name]
    body = (module.TokenUnpauseTransactionBody if token.paused else module.TokenPauseTransactionBody)()
    body.token.tokenNum = token.num
    em.emit(Tx(token.treasury, name, body, picks.fee(em, "tokenFreeze")))
    token.paused = not token.paused
    return True


def wipe(em: Emitter) -> bool:
    """The treasury wipes part of a holder's units, or one of its serials: the supply drops."""
    token = picks.sample(
        em, em.ledger.token_list, lambda t: t.regulated and em.ledger.balance(t.treasury) >= 50 * HBAR
    )
    if token is None or token.paused:
        return False
    holder = picks.sample(em, token.holders[1:], lambda a: token.balances[a] > 0 and token.movable(a))
    if holder is None:
        return False
    body = em.hapi.bodies["token_wipe_account"].TokenWipeAccountTransactionBody(account=em.account_id(holder))
    body.token.tokenNum = token.num
    record = em.new_record()
    movement = record.tokenTransferLists.add()
    movement.token.tokenNum = token.num
    serial = None
    if token.fungible:
        amount = em.rng.randrange(1, token.balances[holder] + 1)
        body.amount = amount
        movement.transfers.add(accountID=em.account_id(holder), amount=-amount)
    else:
        serial = next(s for s in token.live_serials if token.nfts[s].owner == holder)
        amount = 1
        body.serialNumbers.append(serial)
        movement.nftTransfers.add(senderAccountID=em.account_id(holder), serialNumber=serial)
    token.total_supply -= amount
    token.balances[holder] -= amount
    record.receipt.newTotalSupply = token.total_supply
    em.emit(Tx(token.treasury, "tokenWipe", body, picks.fee(em, "tokenBurn")), record)
    if serial is not None:
        nft = token.nfts[serial]
        nft.owner, nft.deleted, nft.spender = None, True, None
        token.live_serials.remove(serial)
    return True


def reject(em: Emitter) -> bool:
    """A holder rejects its units of a fungible token, or one serial, back to the treasury (no custom fees
    are charged)."""
    ledger = em.ledger
    token = picks.sample(em, ledger.token_list, lambda t: not t.regulated and not t.paused and len(t.holders) > 1)
    if token is None:
        return False
    collectors = {fee.collector for fee in token.custom_fees}
    if token.royalty is not None:
        collectors.add(token.royalty.collector)
    owner = picks.sample(
        em,
        token.holders[1:],
        lambda a: token.balances[a] > 0 and a not in collectors and ledger.balance(a) >= 10 * HBAR,
    )
    if owner is None:
        return False
    body = em.hapi.bodies["token_reject"].TokenRejectTransactionBody(owner=em.account_id(owner))
    reference = body.rejections.add()
    record = em.new_record()
    movement = record.tokenTransferLists.add()
    movement.token.tokenNum = token.num
    serial = None
    if token.fungible:
        amount = token.balances[owner]
        reference.fungible_token.tokenNum = token.num
        for account, value in sorted({owner: -amount, token.treasury: amount}.items()):
            movement.transfers.add(accountID=em.account_id(account), amount=value)
    else:
        serial = next(s for s in token.live_serials if token.nfts[s].owner == owner)
        amount = 1
        reference.nft.token_ID.tokenNum = token.num
        reference.nft.serial_number = serial
        movement.nftTransfers.add(
            senderAccountID=em.account_id(owner),
            receiverAccountID=em.account_id(token.treasury),
            serialNumber=serial,
        )
    em.emit(Tx(owner, "tokenReject", body, picks.fee(em, "tokenTransfer")), record)
    token.balances[owner] -= amount
    token.balances[token.treasury] += amount
    if serial is not None:
        token.nfts[serial].owner = token.treasury
        token.nfts[serial].spender = None
    return True
