"""Fungible-token holdings, derived account by account: ``token_account`` associations, ``token_allowance`` rows,
pending fungible ``token_airdrop`` rows and ``token_balance`` snapshot rows.

:func:`fungible_associations` is the single source of truth for which fungible tokens an account is associated
with; the airdrop, balance and transaction generators call it again rather than remembering its result.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncpg import Range

from ledgermirror.dataset.accounts import balance_at
from ledgermirror.dataset.tokens import FROZEN, GRANTED, NOT_APPLICABLE, REVOKED, UNFROZEN, TokenFacts, token_facts
from ledgermirror.dataset.world import DAY, POW10, SECOND, Emit, Tag, World, between, count_around, entity_id


@dataclass(frozen=True, slots=True)
class Association:
    account: int  # account index
    token: TokenFacts
    created: int
    modified: int  # lower bound of the current version: creation, or the dissociation
    associated: bool
    automatic: bool
    freeze_status: int
    kyc_status: int
    balance: int
    balance_timestamp: int

    def holds_at(self, at: int) -> bool:
        """Whether the association existed at ``at``."""
        return self.created < at and (self.associated or at < self.modified)


def fungible_associations(world: World, account: int) -> list[Association]:
    """The fungible tokens an account is (or was) associated with: its own treasury token first, then a sample."""
    if world.is_deleted(account):
        return []
    rng = world.rng(Tag.ASSOCIATION, account)
    found: list[Association] = []
    own = world.treasury_token(account)
    if own is not None and not world.is_nft(own):
        facts = token_facts(world, own)
        found.append(Association(
            account, facts, facts.created, facts.created, True, False,
            UNFROZEN if facts.freeze_key else NOT_APPLICABLE, GRANTED if facts.kyc_key else NOT_APPLICABLE,
            facts.total_supply * 6 // 10, facts.created,
        ))  # fmt: skip
    wanted = min(count_around(rng, world.profile.associations_per_account), world.fungible_tokens)
    if wanted == 0:
        return found
    account_created = world.account_created(account)
    for rank in rng.sample(range(world.fungible_tokens), wanted):
        token = world.fungible_token(rank)
        if token == own:
            continue
        facts = token_facts(world, token)
        created = between(rng, max(facts.created, account_created) + SECOND, world.end - DAY)
        associated = rng.random() >= 0.05
        modified = created if associated else between(rng, created + SECOND, world.end)
        freeze = facts.freeze_status
        if freeze == FROZEN and rng.random() < 0.5:
            freeze = UNFROZEN
        kyc = (GRANTED if rng.random() < 0.8 else REVOKED) if facts.kyc_key else NOT_APPLICABLE
        balance = rng.randrange(facts.total_supply // 1_000 + 1) if associated and rng.random() < 0.8 else 0
        changed = between(rng, created, world.end) if balance else modified
        found.append(Association(
            account, facts, created, modified, associated, rng.random() < 0.1, freeze, kyc, balance, changed,
        ))  # fmt: skip
    return found


def associations(world: World) -> Emit:
    """``token_account`` rows for fungible tokens, and the token allowances their owners granted."""
    per_association = world.profile.token_allowances / max(
        1.0, world.accounts * min(world.profile.associations_per_account, world.fungible_tokens)
    )
    for account in range(world.accounts):
        owner = entity_id(world.account_num(account))
        allowance_rng = world.rng(Tag.TOKEN_ALLOWANCE, account)
        for held in fungible_associations(world, account):
            yield "token_account", {
                "account_id": owner, "token_id": held.token.id, "associated": held.associated,
                "automatic_association": held.automatic, "created_timestamp": held.created,
                "freeze_status": held.freeze_status, "kyc_status": held.kyc_status,
                "timestamp_range": Range(held.modified, None), "balance": held.balance,
                "balance_timestamp": held.balance_timestamp,
            }  # fmt: skip
            if not held.associated:
                continue
            wanted = count_around(allowance_rng, per_association)
            for spender in world.sample_accounts(allowance_rng, wanted, exclude=(account,)):
                unit = POW10[held.token.decimals]
                granted = allowance_rng.randrange(1, 10_000) * unit
                spent = allowance_rng.randrange(granted + 1) if allowance_rng.random() < 0.4 else 0
                since = max(held.created, world.account_created(spender)) + SECOND
                yield "token_allowance", {
                    "owner": owner, "spender": entity_id(world.account_num(spender)), "token_id": held.token.id,
                    "amount_granted": granted, "amount": granted - spent, "payer_account_id": owner,
                    "timestamp_range": Range(between(allowance_rng, since, world.end), None),
                }  # fmt: skip


def fungible_airdrops(world: World) -> Emit:
    """Pending airdrops from token treasuries to accounts not associated with the token."""
    mean = world.profile.airdrops * 0.8 / max(1, world.fungible_tokens)
    for rank in range(world.fungible_tokens):
        token = world.fungible_token(rank)
        facts = token_facts(world, token)
        rng = world.rng(Tag.AIRDROP, token)
        sender = entity_id(world.account_num(facts.treasury))
        for receiver in world.sample_accounts(rng, count_around(rng, mean), exclude=(facts.treasury,)):
            if any(held.token.index == token for held in fungible_associations(world, receiver)):
                continue
            amount = rng.randrange(1, 1_000) * POW10[facts.decimals]
            since = max(facts.created, world.account_created(receiver)) + SECOND
            yield "token_airdrop", {
                "sender_account_id": sender, "receiver_account_id": entity_id(world.account_num(receiver)),
                "token_id": facts.id, "serial_number": 0, "amount": amount, "state": "PENDING",
                "timestamp_range": Range(between(rng, since, world.end), None),
            }  # fmt: skip


def fungible_token_balances(world: World) -> Emit:
    """``token_balance`` rows for every fungible association alive at each snapshot."""
    snapshots = world.snapshot_times()
    last = len(snapshots) - 1
    for account in range(world.accounts):
        owner = entity_id(world.account_num(account))
        for held in fungible_associations(world, account):
            key = owner * 7_919 + held.token.index
            for number, at in enumerate(snapshots):
                if held.holds_at(at):
                    balance = (
                        balance_at(world, key, held.balance, number, number == last) if held.associated else 0
                    )
                    yield "token_balance", {
                        "consensus_timestamp": at, "account_id": owner, "token_id": held.token.id,
                        "balance": balance,
                    }  # fmt: skip
