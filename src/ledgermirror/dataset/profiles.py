"""Dataset sizes: a :class:`Profile` says how many of each thing the synthetic ledger holds.

``small`` is the demo data set (loads in a couple of seconds). ``medium`` and ``large`` are benchmark sizes; the
generators stream their rows in chunks, so memory stays bounded whatever the profile.
"""

from __future__ import annotations

from dataclasses import dataclass


class ProfileError(ValueError):
    """A profile whose numbers cannot produce a consistent ledger."""


@dataclass(frozen=True)
class Profile:
    """Sizes of one synthetic ledger. Counts marked "about" are means; the exact count depends on the seed."""

    name: str
    accounts: int  # user accounts, 0.0.1001 up (system accounts come on top)
    tokens: int  # 7 in 10 fungible, 3 in 10 non-fungible
    associations_per_account: float  # about this many fungible-token associations per account
    contracts: int = 0
    contract_calls: int = 0  # about, taken from the transfers: calls and Ethereum transactions
    crypto_allowances: int = 0  # about
    token_allowances: int = 0  # about
    nft_allowances: int = 0  # about
    nfts: int = 0  # about, minted across the non-fungible tokens
    airdrops: int = 0  # about, pending airdrops
    transactions: int = 1  # all transactions: one creation per account, contract and token, the rest transfers
    record_files: int = 1  # blocks; every block holds at least one transfer
    balance_snapshots: int = 1  # full account/token balance snapshots, one a day, ending on the last day
    staking_days: int = 1  # days of node_stake history
    days: int = 30  # length of the timeline
    topics: int = 0  # consensus topics (dataset/consensus.py)
    topic_messages: int = 0  # their messages, a quarter of them in the first topic
    schedules: int = 0  # scheduled transactions, executed, pending, deleted and expired in turn
    chunk_rows: int = 20_000  # rows per COPY

    def __post_init__(self) -> None:
        counts = {
            "accounts": self.accounts,
            "tokens": self.tokens,
            "contracts": self.contracts,
            "contract_calls": self.contract_calls,
            "crypto_allowances": self.crypto_allowances,
            "token_allowances": self.token_allowances,
            "nft_allowances": self.nft_allowances,
            "nfts": self.nfts,
            "airdrops": self.airdrops,
            "topics": self.topics,
            "topic_messages": self.topic_messages,
            "schedules": self.schedules,
        }
        for field, value in counts.items():
            if value < 0:
                raise ProfileError(f"{field} must not be negative, got {value}")
        if self.accounts < 2:
            raise ProfileError("at least 2 accounts are needed")
        if self.tokens > self.accounts:
            raise ProfileError("every token needs its own treasury account: tokens must not exceed accounts")
        if self.associations_per_account < 0:
            raise ProfileError("associations_per_account must not be negative")
        creations = self.accounts + self.contracts + self.tokens
        if self.record_files < 1 or self.transactions < creations + self.record_files:
            raise ProfileError(
                "need at least one record file, and transactions for every entity creation plus at least one"
                " transfer per record file"
            )
        if self.balance_snapshots < 1 or self.staking_days < 1:
            raise ProfileError("need at least one balance snapshot and one staking day")
        if self.days < self.balance_snapshots + self.staking_days + 2:
            raise ProfileError("days must exceed balance_snapshots + staking_days + 1")
        if self.chunk_rows < 1:
            raise ProfileError("chunk_rows must be positive")


SMALL = Profile(
    name="small",
    accounts=1_000,
    tokens=60,
    associations_per_account=3.0,
    contracts=8,
    contract_calls=300,
    crypto_allowances=300,
    token_allowances=300,
    nft_allowances=60,
    nfts=400,
    airdrops=60,
    transactions=7_000,
    record_files=600,
    balance_snapshots=3,
    staking_days=3,
    days=30,
    topics=20,
    topic_messages=2_000,
    schedules=40,
)

MEDIUM = Profile(
    name="medium",
    accounts=1_000_000,
    tokens=100_000,
    associations_per_account=2.0,
    contracts=10_000,
    contract_calls=250_000,
    crypto_allowances=250_000,
    token_allowances=200_000,
    nft_allowances=50_000,
    nfts=100_000,
    airdrops=50_000,
    transactions=5_000_000,
    record_files=500_000,
    balance_snapshots=2,
    staking_days=7,
    days=365,
    topics=1_000,
    topic_messages=1_000_000,
    schedules=20_000,
    chunk_rows=50_000,
)

LARGE = Profile(
    name="large",
    accounts=10_000_000,
    tokens=1_000_000,
    associations_per_account=2.0,
    contracts=100_000,
    contract_calls=2_500_000,
    crypto_allowances=2_500_000,
    token_allowances=2_000_000,
    nft_allowances=500_000,
    nfts=1_000_000,
    airdrops=500_000,
    transactions=50_000_000,
    record_files=5_000_000,
    balance_snapshots=2,
    staking_days=14,
    days=730,
    topics=10_000,
    topic_messages=10_000_000,
    schedules=200_000,
    chunk_rows=100_000,
)

PROFILES: dict[str, Profile] = {profile.name: profile for profile in (SMALL, MEDIUM, LARGE)}


def resolve_profile(profile: str | Profile) -> Profile:
    """The profile itself, or the named one from :data:`PROFILES`."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ProfileError(f"unknown dataset profile {profile!r} (known: {known})") from None
