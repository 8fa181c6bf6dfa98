"""Non-fungible tokens, derived token by token: ``nft`` rows, the ``token_account`` rows of their treasury and
holders, ``nft_allowance`` rows, pending NFT ``token_airdrop`` rows and NFT ``token_balance`` snapshot rows.

:func:`nft_plan` decides everything about one token (who owns which serial since when, who approved whom), so
every table is filled from the same decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncpg import Range

from ledgermirror.dataset.tokens import (
    GRANTED,
    NOT_APPLICABLE,
    UNFROZEN,
    TokenFacts,
    content_uri,
    nft_burned,
    token_facts,
)
from ledgermirror.dataset.world import DAY, SECOND, Emit, Tag, World, between, count_around, entity_id

_HOLDER_SHARE = 0.6  # about this share of a token's serials is held outside the treasury


@dataclass(frozen=True, slots=True)
class Serial:
    number: int
    owner: int | None  # account index; None once burned
    minted: int
    modified: int  # mint, transfer to the owner, or burn
    spender: int | None  # account index with a per-serial approval


@dataclass(frozen=True, slots=True)
class Holding:
    account: int  # account index
    created: int  # association time
    treasury: bool

    def count_at(self, serials: list[Serial], at: int) -> int:
        """How many serials this account held at ``at``."""
        if self.treasury:
            return sum(1 for s in serials if s.minted <= at and (s.owner == self.account or s.modified > at))
        return sum(1 for s in serials if s.owner == self.account and s.modified <= at)


@dataclass(frozen=True, slots=True)
class NftPlan:
    facts: TokenFacts
    serials: list[Serial]
    holdings: list[Holding]  # the treasury first
    allowances: list[tuple[int, int, bool, int]]  # owner, spender, approved_for_all, since
    airdrops: list[tuple[int, int, int]]  # receiver, serial, since


def nft_plan(world: World, token: int) -> NftPlan:
    """Mints, owners, approvals and pending airdrops of one non-fungible token."""
    facts = token_facts(world, token)
    rng = world.rng(Tag.NFT, token)
    treasury = facts.treasury
    gap = max(1, (world.end - DAY - facts.created) // (facts.serials + 1))
    wanted = min(facts.serials, count_around(rng, facts.serials * _HOLDER_SHARE))
    holders = world.sample_accounts(rng, wanted, exclude=(treasury,))
    serials: list[Serial] = []
    for number in range(1, facts.serials + 1):
        minted = world.between_blocks(facts.created + number * gap + rng.randrange(gap))
        if nft_burned(world, token, number):
            burned = world.between_blocks(between(rng, minted + SECOND, world.end))
            serials.append(Serial(number, None, minted, burned, None))
            continue
        if number <= len(holders):
            owner = holders[number - 1]
        elif holders and rng.random() < _HOLDER_SHARE:
            owner = rng.choice(holders)
        else:
            owner = treasury
        if owner == treasury:
            serials.append(Serial(number, owner, minted, minted, None))
            continue
        spender = world.pick_account(rng, world.accounts, exclude=owner) if rng.random() < 0.1 else None
        moved = world.between_blocks(between(rng, minted + SECOND, world.end))
        serials.append(Serial(number, owner, minted, moved, spender))
    holdings = [Holding(treasury, facts.created, True)]
    for holder in holders:
        received = [s.modified for s in serials if s.owner == holder]
        since = min(received) - 1 - rng.randrange(SECOND) if received else between(rng, facts.created, world.end)
        holdings.append(Holding(holder, max(since, facts.created + 1), False))
    allowances: list[tuple[int, int, bool, int]] = []
    mean = world.profile.nft_allowances / max(1.0, world.profile.nfts * _HOLDER_SHARE)
    for holding in holdings[1:]:
        for spender in world.sample_accounts(rng, count_around(rng, mean), exclude=(holding.account,)):
            since = between(rng, holding.created + SECOND, world.end)
            allowances.append((holding.account, spender, rng.random() < 0.85, since))
    in_treasury = [s for s in serials if s.owner == treasury]
    wanted = min(len(in_treasury), count_around(rng, world.profile.airdrops * 0.2 / max(1, world.nft_tokens)))
    receivers = world.sample_accounts(rng, wanted, exclude=(treasury, *holders))
    airdrops = [
        (receiver, serial.number, between(rng, serial.minted + SECOND, world.end))
        for receiver, serial in zip(receivers, rng.sample(in_treasury, len(receivers)), strict=True)
    ]
    return NftPlan(facts, serials, holdings, allowances, airdrops)


def nft_tokens(world: World) -> list[int]:
    return [world.nft_token(rank) for rank in range(world.nft_tokens)]


def nfts(world: World) -> Emit:
    """``nft``, NFT ``token_account``, ``nft_allowance`` and NFT ``token_airdrop`` rows."""
    for token in nft_tokens(world):
        plan = nft_plan(world, token)
        facts = plan.facts
        treasury_id = entity_id(world.account_num(facts.treasury))
        for serial in plan.serials:
            owner = None if serial.owner is None else entity_id(world.account_num(serial.owner))
            spender = None if serial.spender is None else entity_id(world.account_num(serial.spender))
            metadata = f"{content_uri(world, 'nft', token)}/{serial.number}.json".encode()
            yield "nft", {
                "token_id": facts.id, "serial_number": serial.number, "account_id": owner,
                "created_timestamp": serial.minted, "deleted": serial.owner is None, "metadata": metadata,
                "spender": spender, "timestamp_range": Range(serial.modified, None),
            }  # fmt: skip
        for holding in plan.holdings:
            count = holding.count_at(plan.serials, world.end)
            owned = [s.modified for s in plan.serials if s.owner == holding.account]
            changed = max([holding.created, *owned])
            yield "token_account", {
                "account_id": entity_id(world.account_num(holding.account)), "token_id": facts.id,
                "associated": True, "automatic_association": False, "created_timestamp": holding.created,
                "freeze_status": UNFROZEN if facts.freeze_key else NOT_APPLICABLE,
                "kyc_status": GRANTED if facts.kyc_key else NOT_APPLICABLE,
                "timestamp_range": Range(holding.created, None), "balance": count, "balance_timestamp": changed,
            }  # fmt: skip
        for owner_index, spender_index, approved_for_all, since in plan.allowances:
            owner_id = entity_id(world.account_num(owner_index))
            yield "nft_allowance", {
                "owner": owner_id, "spender": entity_id(world.account_num(spender_index)), "token_id": facts.id,
                "approved_for_all": approved_for_all, "payer_account_id": owner_id,
                "timestamp_range": Range(since, None),
            }  # fmt: skip
        for receiver, number, since in plan.airdrops:
            yield "token_airdrop", {
                "sender_account_id": treasury_id, "receiver_account_id": entity_id(world.account_num(receiver)),
                "token_id": facts.id, "serial_number": number, "amount": None, "state": "PENDING",
                "timestamp_range": Range(since, None),
            }  # fmt: skip


def nft_token_balances(world: World) -> Emit:
    """``token_balance`` rows of NFT holders (serial counts) at each snapshot."""
    for token in nft_tokens(world):
        plan = nft_plan(world, token)
        for holding in plan.holdings:
            account_id = entity_id(world.account_num(holding.account))
            for at in world.snapshot_times():
                if holding.created < at:
                    yield "token_balance", {
                        "consensus_timestamp": at, "account_id": account_id, "token_id": plan.facts.id,
                        "balance": holding.count_at(plan.serials, at),
                    }  # fmt: skip
