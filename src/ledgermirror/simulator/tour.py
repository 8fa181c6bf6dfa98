"""Set-ups of the opening tour for kinds that need a particular state to show at all in a short run: a
regulated token with a KYC-granted holder, an NFT class with a royalty fee resold by a holder, and a plain
NFT class with serials to airdrop, a token deleted before anyone holds it."""

from __future__ import annotations

from ledgermirror.simulator import picks, token_changes, tokens
from ledgermirror.simulator.emitter import Emitter
from ledgermirror.simulator.picks import HBAR
from ledgermirror.simulator.token_admin import grant_kyc


def create(em: Emitter, fungible: bool, **options: bool | None) -> bool:
    """:func:`tokens.create_token` as a generator of the mix (True when a token was created)."""
    return tokens.create_token(em, fungible, **options) is not None


def regulated_setup(em: Emitter) -> bool:
    """A regulated fungible token; a user associates, is granted KYC and receives units."""
    token = tokens.create_token(em, True, with_fees=False, regulated=True)
    if token is None:
        return False
    holder = picks.payer(em, 200 * HBAR, exclude=(token.treasury,))
    if holder is not None:
        tokens.associate_with(em, holder, [token.num])
        grant_kyc(em, token, holder)
        tokens.send_tokens(em, token, token.treasury, holder, token.balances[token.treasury] // 10)
    return True


def royalty_setup(em: Emitter) -> bool:
    """An NFT class with a royalty fee: two users associate, serials are minted, one goes to the first user,
    who passes it on to the second (the royalty or its fallback is charged)."""
    token = tokens.create_token(em, False, royalty=True)
    if token is None:
        return False
    buyers = [picks.payer(em, 200 * HBAR, exclude=(token.treasury,)) for _ in range(2)]
    first, second = buyers
    if first is None or second is None or first == second:
        return True
    tokens.associate_with(em, first, [token.num])
    tokens.associate_with(em, second, [token.num])
    if tokens.mint_into(em, token, 3):
        serial = token.live_serials[0]
        if tokens.transfer_nft(em, token, serial, first):
            tokens.transfer_nft(em, token, serial, second)
    return True


def plain_nft_setup(em: Emitter) -> bool:
    """An NFT class without fees or keys beyond supply, with a few serials (for NFT airdrops)."""
    token = tokens.create_token(em, False, regulated=False, royalty=False)
    return token is not None and tokens.mint_into(em, token, 4)


def short_lived_token(em: Emitter) -> bool:
    """A fungible token created and deleted by its treasury before anyone associates."""
    token = tokens.create_token(em, True, with_fees=False, regulated=False)
    return token is not None and token_changes.delete_token(em)
