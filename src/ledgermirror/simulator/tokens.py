"""Token service generators: fungible tokens with custom fees, NFT classes, associations, mints, burns and
transfers (fungible with the fees they assess, NFT serials), and a transfer refused for want of an
association."""

from __future__ import annotations

from typing import Any

from ledgermirror.simulator import picks, royalties
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import FROZEN, GRANTED, UNFROZEN, CustomFee, Nft, Token
from ledgermirror.simulator.picks import HBAR

_NAMES = ("Aurora", "Basalt", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Harbor", "Indigo", "Juniper")
_SUFFIXES = ("Coin", "Credit", "Points", "Art", "Pass", "Stable", "Share")
FUNGIBLE_COMMON = 0
NON_FUNGIBLE_UNIQUE = 1
INFINITE = 0
FINITE = 1


def create_token(
    em: Emitter,
    fungible: bool,
    with_fees: bool | None = None,
    *,
    regulated: bool | None = None,
    royalty: bool | None = None,
) -> Token | None:
    """A fungible token (fixed custom fees, 60 %) or an NFT class (a royalty fee with a fallback, half of
    them); one in five is regulated (freeze, KYC, pause and wipe keys, and no custom fees)."""
    treasury = picks.payer(em, 500 * HBAR)
    if treasury is None:
        return None
    hapi, ledger = em.hapi, em.ledger
    num = ledger.new_num()
    name = f"{em.rng.choice(_NAMES)} {em.rng.choice(_SUFFIXES)}"
    symbol = "".join(word[:2] for word in name.split()).upper() + str(num % 100)
    decimals = em.rng.choice((0, 2, 6, 8)) if fungible else 0
    initial = em.rng.randrange(1, 1000) * 10 ** (decimals + 3) if fungible else 0
    finite = not fungible and em.rng.random() < 0.5
    max_supply = 10_000 if finite else 0
    body = hapi.bodies["token_create"].TokenCreateTransactionBody(
        name=name,
        symbol=symbol,
        decimals=decimals,
        initialSupply=initial,
        treasury=em.account_id(treasury),
        adminKey=picks.key_message(em, picks.ed25519_key(em)),
        supplyKey=picks.key_message(em, picks.ed25519_key(em)),
        tokenType=FUNGIBLE_COMMON if fungible else NON_FUNGIBLE_UNIQUE,
        supplyType=FINITE if finite else INFINITE,
        maxSupply=max_supply,
        memo=f"{name} token",
        autoRenewAccount=em.account_id(treasury),
    )
    body.autoRenewPeriod.seconds = 7_776_000
    if not fungible:
        body.metadata_key.CopyFrom(picks.key_message(em, picks.ed25519_key(em)))
    token = Token(num, fungible, name, symbol, decimals, treasury, initial, initial, max_supply, 0, body.memo)
    if regulated is None:
        regulated = with_fees is None and royalty is None and em.rng.random() < 0.2
    token.regulated = regulated
    associated = [treasury]
    if token.regulated:
        for key_field in ("freezeKey", "kycKey", "pause_key", "wipeKey"):
            getattr(body, key_field).CopyFrom(picks.key_message(em, picks.ed25519_key(em)))
    elif fungible and (with_fees if with_fees is not None else em.rng.random() < 0.6):
        _custom_fees(em, token, body, associated, 2 if with_fees else em.rng.randrange(3))
        body.fee_schedule_key.CopyFrom(picks.key_message(em, picks.ed25519_key(em)))
    elif not fungible and (royalty if royalty is not None else em.rng.random() < 0.5):
        royalties.add_royalty(em, token, body)
    record = em.new_record()
    record.receipt.tokenID.tokenNum = num
    for account in associated:
        association = record.automatic_token_associations.add(account_id=em.account_id(account))
        association.token_id.tokenNum = num
    if initial:
        movement = record.tokenTransferLists.add()
        movement.token.tokenNum = num
        movement.transfers.add(accountID=em.account_id(treasury), amount=initial)
    token.created_timestamp = em.emit(
        Tx(treasury, "tokenCreation", body, picks.fee(em, "tokenCreation"), memo=""), record
    )
    for account in associated:
        associate_account(em, token, account)
        if token.regulated:
            token.freeze_status[account], token.kyc_status[account] = UNFROZEN, GRANTED
    token.balances[treasury] = initial
    ledger.add_token(token)
    return token


def _custom_fees(em: Emitter, token: Token, body: Any, associated: list[int], choice: int) -> None:
    """A fixed hbar fee (choice 0), a fixed fee in the token itself (1), or both (2), each to its own
    collector."""
    if choice in (0, 2):
        collector = picks.other_user(em, token.treasury)
        if collector is not None:
            amount = em.rng.randrange(1, 20) * HBAR // 100
            fee = body.custom_fees.add(fee_collector_account_id=em.account_id(collector))
            fee.fixed_fee.amount = amount
            token.custom_fees.append(CustomFee(collector, amount, denominated_in_token=False))
            em.ledger.accounts[collector].pinned = True
    if choice in (1, 2):
        collector = picks.other_user(em, token.treasury, *associated)
        if collector is not None:
            amount = em.rng.randrange(1, 10) * 10**token.decimals
            fee = body.custom_fees.add(fee_collector_account_id=em.account_id(collector))
            fee.fixed_fee.amount = amount
            fee.fixed_fee.denominating_token_id.tokenNum = 0  # 0.0.0: the token being created
            token.custom_fees.append(CustomFee(collector, amount, denominated_in_token=True))
            associated.append(collector)


def associate_account(em: Emitter, token: Token, account: int) -> None:
    if account not in token.balances:
        token.balances[account] = 0
        token.holders.append(account)
        em.ledger.accounts[account].pinned = True


def associate(em: Emitter) -> bool:
    account = picks.payer(em, 200 * HBAR)
    if account is None or not em.ledger.tokens:
        return False
    chosen = sorted(
        {
            token.num
            for _ in range(em.rng.choice((1, 1, 2)))
            if (
                token := picks.sample(
                    em, em.ledger.token_list, lambda t: account not in t.balances and not t.paused
                )
            )
            is not None
        }
    )
    if not chosen:
        return False
    associate_with(em, account, chosen)
    return True


def associate_with(em: Emitter, account: int, token_nums: list[int]) -> None:
    body = em.hapi.bodies["token_associate"].TokenAssociateTransactionBody(account=em.account_id(account))
    for num in token_nums:
        body.tokens.add(tokenNum=num)
    em.emit(Tx(account, "tokenAssociate", body, picks.fee(em, "tokenAssociate")))
    for num in token_nums:
        associate_account(em, em.ledger.tokens[num], account)


def mint(em: Emitter, fungible: bool) -> bool:
    token = picks.sample(em, em.ledger.fungible if fungible else em.ledger.nft_classes, lambda t: not t.paused)
    if token is None:
        return False
    return mint_into(em, token)


def mint_into(em: Emitter, token: Token, count: int | None = None) -> bool:
    """Units of a fungible token, or ``count`` (else 1-5) serials of an NFT class, to the treasury."""
    fungible = token.fungible
    treasury = token.treasury
    if em.ledger.balance(treasury) < 100 * HBAR:
        return False
    body = em.hapi.bodies["token_mint"].TokenMintTransactionBody()
    body.token.tokenNum = token.num
    record = em.new_record()
    movement = record.tokenTransferLists.add()
    movement.token.tokenNum = token.num
    serials: list[int] = []
    if fungible:
        amount = em.rng.randrange(1, 100) * 10 ** (token.decimals + 2)
        body.amount = amount
        movement.transfers.add(accountID=em.account_id(treasury), amount=amount)
        token.total_supply += amount
        token.balances[treasury] += amount
    else:
        count = count if count is not None else em.rng.randrange(1, 6)
        if token.max_supply and token.total_supply + count > token.max_supply:
            return False
        for _ in range(count):
            serial = token.next_serial
            token.next_serial += 1
            serials.append(serial)
            metadata = f"ipfs://bafy{em.rng.randbytes(16).hex()}/{serial}.json".encode()
            body.metadata.append(metadata)
            movement.nftTransfers.add(receiverAccountID=em.account_id(treasury), serialNumber=serial)
        token.total_supply += count
        token.balances[treasury] += count
    record.receipt.newTotalSupply = token.total_supply
    record.receipt.serialNumbers.extend(serials)
    stamp = em.emit(
        Tx(treasury, "tokenMint", body, picks.fee(em, "tokenMint" if fungible else "tokenMintNft")), record
    )
    for serial, metadata in zip(serials, body.metadata, strict=True):
        token.nfts[serial] = Nft(treasury, bytes(metadata), stamp)
        token.live_serials.append(serial)
    return True


def burn(em: Emitter) -> bool:
    token = picks.sample(em, em.ledger.fungible, lambda t: t.balances.get(t.treasury, 0) > 1 and not t.paused)
    if token is None or em.ledger.balance(token.treasury) < 100 * HBAR:
        return False
    amount = em.rng.randrange(1, token.balances[token.treasury] // 10 + 2)
    amount = min(amount, token.balances[token.treasury])
    body = em.hapi.bodies["token_burn"].TokenBurnTransactionBody(amount=amount)
    body.token.tokenNum = token.num
    token.total_supply -= amount
    token.balances[token.treasury] -= amount
    record = em.new_record()
    record.receipt.newTotalSupply = token.total_supply
    movement = record.tokenTransferLists.add()
    movement.token.tokenNum = token.num
    movement.transfers.add(accountID=em.account_id(token.treasury), amount=-amount)
    em.emit(Tx(token.treasury, "tokenBurn", body, picks.fee(em, "tokenBurn")), record)
    return True


def transfer_fungible(em: Emitter) -> bool:
    token = picks.sample(em, em.ledger.fungible, lambda t: len(t.holders) >= 2)
    if token is None:
        return False
    return send_tokens(em, token, em.rng.choice(token.holders), em.rng.choice(token.holders))


def fee_paying_transfer(em: Emitter) -> bool:
    """A transfer that assesses custom fees: a holder who is neither the treasury nor a collector sends
    tokens on (the treasury first hands it some when it has none)."""
    for token in em.ledger.fungible:
        if not token.custom_fees:
            continue
        collectors = {fee.collector for fee in token.custom_fees}
        payers = [h for h in token.holders[1:] if h not in collectors and em.ledger.balance(h) >= 50 * HBAR]
        while len(payers) < 2:
            account = picks.payer(em, 500 * HBAR)
            if account is None or account in token.balances:
                return False
            associate_with(em, account, [token.num])
            payers.append(account)
        sender, receiver = payers[0], payers[1]
        treasury_balance = token.balances[token.treasury]
        if token.balances[sender] <= treasury_balance // 100:
            send_tokens(em, token, token.treasury, sender, treasury_balance // 10)
        return send_tokens(em, token, sender, receiver, token.balances[sender] // 2)
    return False


def send_tokens(em: Emitter, token: Token, sender: int, receiver: int, amount: int | None = None) -> bool:
    """The sender pays; custom fees (not charged to the treasury or a collector) add an hbar movement or a
    token movement to the collector, and an assessed fee each."""
    balance = token.balances[sender]
    exempt = sender == token.treasury or any(fee.collector == sender for fee in token.custom_fees)
    fees = [] if exempt else token.custom_fees
    in_token = sum(fee.amount for fee in fees if fee.denominated_in_token)
    in_hbar = sum(fee.amount for fee in fees if not fee.denominated_in_token)
    hbar_needed = picks.FEES["tokenTransfer"] * 2 + in_hbar
    if sender == receiver or balance <= in_token or em.ledger.balance(sender) < hbar_needed:
        return False
    if not token.movable(sender, receiver, *(fee.collector for fee in fees)):
        return False
    if em.ledger.accounts[sender].deleted:
        return False
    if amount is None:
        amount = max(1, em.rng.randrange(1, balance - in_token + 1) // em.rng.choice((1, 10, 100)))
    amount = min(amount, balance - in_token)
    if amount <= 0:
        return False
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    listed = body.tokenTransfers.add()
    listed.token.tokenNum = token.num
    for account, value in sorted({sender: -amount, receiver: amount}.items()):
        listed.transfers.add(accountID=em.account_id(account), amount=value)
    record = em.new_record()
    moves = {sender: -amount - in_token, receiver: amount}
    hbar: dict[int, int] = {}
    for fee in fees:
        assessed = record.assessed_custom_fees.add(
            amount=fee.amount, fee_collector_account_id=em.account_id(fee.collector)
        )
        assessed.effective_payer_account_id.add(accountNum=sender)
        if fee.denominated_in_token:
            assessed.token_id.tokenNum = token.num
            moves[fee.collector] = moves.get(fee.collector, 0) + fee.amount
        else:
            hbar[sender] = hbar.get(sender, 0) - fee.amount
            hbar[fee.collector] = hbar.get(fee.collector, 0) + fee.amount
    movement = record.tokenTransferLists.add()
    movement.token.tokenNum = token.num
    for account in sorted(moves):
        if moves[account]:
            movement.transfers.add(accountID=em.account_id(account), amount=moves[account])
            token.balances[account] += moves[account]
    em.emit(Tx(sender, "cryptoTransfer", body, picks.fee(em, "tokenTransfer"), hbar=hbar), record)
    return True


def transfer_nft(
    em: Emitter, token: Token | None = None, serial: int | None = None, receiver: int | None = None
) -> bool:
    """A serial moves to another holder; a class with a royalty fee charges it (see ``royalties``)."""
    if token is None:
        token = picks.sample(em, em.ledger.nft_classes, lambda t: bool(t.live_serials) and len(t.holders) >= 2)
    if token is None or not token.live_serials:
        return False
    serial = serial if serial is not None else em.rng.choice(token.live_serials)
    nft = token.nfts[serial]
    owner = nft.owner
    receiver = receiver if receiver is not None else em.rng.choice(token.holders)
    if owner is None or receiver == owner or em.ledger.balance(owner) < 10 * HBAR:
        return False
    if not token.movable(owner, receiver):
        return False
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    record = em.new_record()
    for container in (body.tokenTransfers.add(), record.tokenTransferLists.add()):
        container.token.tokenNum = token.num
        container.nftTransfers.add(
            senderAccountID=em.account_id(owner), receiverAccountID=em.account_id(receiver), serialNumber=serial
        )
    hbar = royalties.charge(em, token, owner, receiver, body=body, record=record)
    if hbar is None:
        return False
    em.emit(Tx(owner, "cryptoTransfer", body, picks.fee(em, "tokenTransfer"), hbar=hbar), record)
    token.balances[owner] -= 1
    token.balances[receiver] += 1
    nft.owner = receiver
    nft.spender = None
    return True


def failed_token_transfer(em: Emitter) -> bool:
    """A fungible transfer to an account not associated with the token: refused, only the fee moves."""
    token = picks.sample(em, em.ledger.fungible, lambda t: not t.paused)
    if token is None:
        return False
    sender = token.treasury
    receiver = picks.other_user(em, *token.holders)
    if receiver is None or receiver in token.balances or em.ledger.balance(sender) < 10 * HBAR:
        return False
    body = em.hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    listed = body.tokenTransfers.add()
    listed.token.tokenNum = token.num
    for account, value in sorted({sender: -1, receiver: 1}.items()):
        listed.transfers.add(accountID=em.account_id(account), amount=value)
    em.emit(
        Tx(
            sender,
            "cryptoTransfer",
            body,
            picks.fee(em, "tokenTransfer"),
            status="TOKEN_NOT_ASSOCIATED_TO_ACCOUNT",
        )
    )
    return True


def dissociate(em: Emitter) -> bool:
    """An account drops a token it holds none of (never the treasury or a fee collector)."""
    ledger = em.ledger
    token = picks.sample(em, ledger.token_list, lambda t: len(t.holders) > 1 and not t.paused)
    if token is None:
        return False
    account = picks.sample(
        em,
        token.holders[1:],
        lambda a: (
            token.balances[a] == 0
            and all(fee.collector != a for fee in token.custom_fees)
            and (token.royalty is None or token.royalty.collector != a)
            and token.freeze_status.get(a) != FROZEN
            and ledger.balance(a) >= 200 * HBAR
        ),
    )
    if account is None:
        return False
    body = em.hapi.bodies["token_dissociate"].TokenDissociateTransactionBody(account=em.account_id(account))
    body.tokens.add(tokenNum=token.num)
    em.emit(Tx(account, "tokenDissociate", body, picks.fee(em, "tokenDissociate")))
    del token.balances[account]
    token.holders.remove(account)
    token.freeze_status.pop(account, None)
    token.kyc_status.pop(account, None)
    return True


def update_token(em: Emitter) -> bool:
    """The treasury renames a token (name, symbol and memo)."""
    token = picks.sample(
        em, em.ledger.token_list, lambda t: not t.paused and em.ledger.balance(t.treasury) >= 100 * HBAR
    )
    if token is None:
        return False
    name = f"{em.rng.choice(_NAMES)} {em.rng.choice(_SUFFIXES)} v2"
    symbol = "".join(word[:2] for word in name.split()[:2]).upper() + str(token.num % 100) + "B"
    body = em.hapi.bodies["token_update"].TokenUpdateTransactionBody(name=name, symbol=symbol)
    body.token.tokenNum = token.num
    body.memo.value = f"{name} token"
    em.emit(Tx(token.treasury, "tokenUpdate", body, picks.fee(em, "tokenUpdate")))
    token.name, token.symbol, token.memo = name, symbol, body.memo.value
    return True
