"""Later changes of a token by its treasury (which holds its keys here): a new fee schedule (the fixed
hbar fee's amount changes), new metadata for NFT serials, and the deletion of a token nobody else holds."""

from __future__ import annotations

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import Token
from ledgermirror.simulator.picks import HBAR


def update_fee_schedule(em: Emitter) -> bool:
    """The fixed fees of a token with custom fees get new amounts (collectors unchanged)."""
    ledger = em.ledger
    token = picks.sample(
        em, ledger.fungible, lambda t: bool(t.custom_fees) and ledger.balance(t.treasury) >= 50 * HBAR
    )
    if token is None:
        return False
    body = em.hapi.bodies["token_fee_schedule_update"].TokenFeeScheduleUpdateTransactionBody()
    body.token_id.tokenNum = token.num
    for fee in token.custom_fees:
        scale = 10**token.decimals if fee.denominated_in_token else HBAR // 100
        fee.amount = em.rng.randrange(1, 20) * scale
        listed = body.custom_fees.add(fee_collector_account_id=em.account_id(fee.collector))
        listed.fixed_fee.amount = fee.amount
        if fee.denominated_in_token:
            listed.fixed_fee.denominating_token_id.tokenNum = token.num
    em.emit(Tx(token.treasury, "token_fee_schedule_update", body, picks.fee(em, "tokenUpdate")))
    return True


def update_nft_metadata(em: Emitter) -> bool:
    """One to three live serials of an NFT class get new metadata (the class has a metadata key)."""
    ledger = em.ledger
    token = picks.sample(
        em,
        ledger.nft_classes,
        lambda t: bool(t.live_serials) and not t.paused and ledger.balance(t.treasury) >= 50 * HBAR,
    )
    if token is None:
        return False
    serials = sorted(set(em.rng.choices(token.live_serials, k=em.rng.randrange(1, 4))))
    metadata = f"ipfs://bafy{em.rng.randbytes(16).hex()}/revised.json".encode()
    body = em.hapi.bodies["token_update_nfts"].TokenUpdateNftsTransactionBody(serial_numbers=serials)
    body.token.tokenNum = token.num
    body.metadata.value = metadata
    em.emit(Tx(token.treasury, "token_update_nfts", body, picks.fee(em, "tokenUpdate")))
    for serial in serials:
        token.nfts[serial].metadata = metadata
    return True


def _deletable(em: Emitter, token: Token) -> bool:
    """Only the treasury holds it, and nothing refers to it (airdrops, allowances)."""
    ledger = em.ledger
    return (
        token.holders == [token.treasury]
        and not any(key[2] == token.num for key in ledger.pending_airdrops)
        and not any(key[2] == token.num for key in ledger.pending_nft_airdrops)
        and not any(key[2] == token.num for key in ledger.token_allowances)
        and not any(key[2] == token.num for key in ledger.nft_allowances)
        and not any(entry[0] == token.num for entry in ledger.nft_serial_allowances)
        and ledger.balance(token.treasury) >= 50 * HBAR
    )


def delete_token(em: Emitter) -> bool:
    """The treasury deletes a token nobody else holds: it leaves every pick of the generators."""
    ledger = em.ledger
    token = picks.sample(em, ledger.token_list, lambda t: _deletable(em, t))
    if token is None:
        return False
    body = em.hapi.bodies["token_delete"].TokenDeleteTransactionBody()
    body.token.tokenNum = token.num
    em.emit(Tx(token.treasury, "tokenDeletion", body, picks.fee(em, "tokenUpdate")))
    token.deleted = True
    ledger.token_list.remove(token)
    (ledger.fungible if token.fungible else ledger.nft_classes).remove(token)
    return True
