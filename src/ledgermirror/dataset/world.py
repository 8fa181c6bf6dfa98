"""The deterministic facts every generator shares: ids, the timeline, per-entity traits and derived bytes.

Nothing here is stored per entity. Each fact is a pure function of ``(seed, index)``, computed with integer hashing
or a per-entity :class:`random.Random`, so any generator can recompute what another one emitted (an account's
creation time, a token's treasury, who owns an NFT) without holding the ledger in memory.

Timeline. All entities live at shard 0, realm 0. User accounts get nums 1001 up, then contracts, then tokens, and
entities are created in num order. Time is cut into ``record_files`` equal intervals; block ``b`` is a window of
at most two seconds at the start of interval ``b``. Entity creations fill the first 60 % of the blocks, spread
evenly, and every block also carries its share of transfer transactions. A creation's timestamp is a closed-form
function of its ordinal, so nothing needs to be looked up.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from ledgermirror.dataset.profiles import Profile
from ledgermirror.ledger.entity_id import encode_entity_id
from ledgermirror.ledger.system_files import (
    ADDRESS_BOOK_FILE,
    EXCHANGE_RATE_FILE,
    FEE_SCHEDULE_FILE,
    NODE_DETAILS_FILE,
)

SECOND = 1_000_000_000
DAY = 86_400 * SECOND
GENESIS = 1_657_701_968_041_986_003  # 2022-07-13T08:46:08.041986003Z
HBAR = 100_000_000  # tinybars
POW10: tuple[int, ...] = tuple(int(10**exponent) for exponent in range(19))  # typed exact powers of ten

SHARD = 0
REALM = 0
TREASURY = 2
FEE_COLLECTOR = 98
STAKING_REWARD = 800
NODE_REWARD = 801
NODE_ACCOUNTS = (3, 4, 5, 6)
SYSTEM_ACCOUNTS = (TREASURY, *NODE_ACCOUNTS, FEE_COLLECTOR, STAKING_REWARD, NODE_REWARD)
SYSTEM_FILES = (ADDRESS_BOOK_FILE, NODE_DETAILS_FILE, FEE_SCHEDULE_FILE, EXCHANGE_RATE_FILE)
FIRST_USER_NUM = 1001
AUTO_RENEW_PERIOD = 7_776_000  # seconds (90 days)
SYSTEM_CREATED = GENESIS - DAY  # system accounts, files and nodes exist a day before the first block

# Token kinds repeat in blocks of ten: these slots are non-fungible, the other seven fungible.
_NFT_SLOTS = (3, 7, 9)
_FUNGIBLE_SLOTS = (0, 1, 2, 4, 5, 6, 8)

_M64 = (1 << 64) - 1
MEMO_LIMIT = 100_000  # derived facts kept per world (a few tens of MB at most)

Row = dict[str, Any]
"""A row by column name, as the writer (``db/write.py``) takes it; omitted columns get their defaults."""

Emit = Iterator[tuple[str, Row]]
"""What a generator yields: ``(table name, row)`` pairs. A versioned row whose ``timestamp_range`` is closed is
a superseded version; the writer routes it to the table's ``_history`` twin."""


class Tag(IntEnum):
    """Separates the hash streams of different facts."""

    ACCOUNT = 1
    ACCOUNT_MORE = 2
    ACCOUNT_KEY = 3
    CONTRACT = 4
    TOKEN = 5
    TOKEN_KEY = 6
    ASSOCIATION = 7
    TOKEN_ALLOWANCE = 8
    CRYPTO_ALLOWANCE = 9
    NFT = 10
    AIRDROP = 11
    BALANCE = 12
    STAKE = 13
    BLOCK = 14
    JITTER = 15
    NETWORK = 16
    PERMUTATION = 17
    NAME = 18
    HISTORY = 19
    HOOK = 20
    REGISTERED_NODE = 21
    CONTRACT_CALL = 22


def mix64(value: int) -> int:
    """A 64-bit integer finaliser (SplitMix64): well spread, fast, identical on every platform."""
    value = (value + 0x9E3779B97F4A7C15) & _M64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _M64
    return value ^ (value >> 31)


def count_around(rng: random.Random, mean: float) -> int:
    """A non-negative integer whose expected value is ``mean`` (uniform on ``[0, 2·mean]``, rounded randomly)."""
    if mean <= 0:
        return 0
    draw = rng.random() * 2 * mean
    whole = int(draw)
    return whole + (1 if rng.random() < draw - whole else 0)


def between(rng: random.Random, low: int, high: int) -> int:
    """A timestamp in ``[low, high)``, or ``low`` when the interval is empty."""
    return low + rng.randrange(high - low) if high > low else low


def entity_id(num: int) -> int:
    """The encoded id of ``SHARD.REALM.num``."""
    return encode_entity_id(SHARD, REALM, num)


@dataclass(frozen=True, slots=True)
class KeyPair:
    key: bytes  # protobuf Key bytes as stored in entity.key
    public_key: str  # lower-case hex of the raw public key


class World:
    """Every shared, derived fact of one (profile, seed) ledger."""

    def __init__(self, profile: Profile, seed: int) -> None:
        self.profile = profile
        self.seed = seed
        self.accounts = profile.accounts
        self.contracts = profile.contracts
        self.tokens = profile.tokens
        self.entities = profile.accounts + profile.contracts + profile.tokens
        self.transfers = profile.transactions - self.entities
        self.start = GENESIS
        self.end = GENESIS + profile.days * DAY
        self.blocks = profile.record_files
        self.creation_blocks = max(1, self.blocks * 6 // 10)
        self.block_interval = (self.end - self.start) // self.blocks
        self.block_window = min(self.block_interval - 1, 2 * SECOND)
        self._salts = {tag: mix64(mix64(seed & _M64) ^ (tag * 0x632BE59BD9B4E019)) for tag in Tag}
        full, rest = divmod(self.tokens, 10)
        self.fungible_tokens = full * 7 + sum(1 for slot in _FUNGIBLE_SLOTS if slot < rest)
        self.nft_tokens = self.tokens - self.fungible_tokens
        # Treasuries: token j belongs to account (a·j + b) mod accounts, a bijection, so no account holds two.
        a = self.hash(Tag.PERMUTATION, 0) % self.accounts or 1
        while math.gcd(a, self.accounts) != 1:
            a += 1
        self._perm_a = a
        self._perm_b = self.hash(Tag.PERMUTATION, 1) % self.accounts
        self._perm_inverse = pow(a, -1, self.accounts)
        # Staking: the last complete staking day before the end, and when its NodeStakeUpdate happened.
        self.last_epoch_day = (self.end - 60 * SECOND) // DAY - 1
        # Derived facts that generators ask for again and again (a token's facts), kept up to a bound. They are
        # pure functions of (seed, index), so keeping them changes no row; generators run one at a time.
        self.memo: dict[tuple[Tag, int], Any] = {}

    def remember(self, tag: Tag, index: int, value: Any) -> None:
        """Keep a derived fact for :attr:`memo`, while fewer than ``MEMO_LIMIT`` are kept."""
        if len(self.memo) < MEMO_LIMIT:
            self.memo[tag, index] = value

    # hashing -----------------------------------------------------------------------------------------------------

    def hash(self, tag: Tag, index: int) -> int:
        """A 64-bit value fixed by (seed, tag, index)."""
        return mix64(self._salts[tag] ^ mix64(index))

    def rng(self, tag: Tag, index: int) -> random.Random:
        """A private random stream for one entity and purpose."""
        return random.Random(self.hash(tag, index))

    def digest(self, label: str, index: int, size: int = 32) -> bytes:
        """``size`` (≤ 64) pseudo-random bytes fixed by (seed, label, index)."""
        return hashlib.blake2b(f"{self.seed}:{label}:{index}".encode(), digest_size=size).digest()

    def key_pair(self, label: str, index: int, *, ecdsa: bool) -> KeyPair:
        """An ED25519 (``1220`` + 32 bytes) or compressed ECDSA secp256k1 (``3a21`` + 33 bytes) key."""
        raw = self.digest(label, index, 33)
        if ecdsa:
            public = bytes((2 + (raw[0] & 1),)) + raw[1:]
            return KeyPair(b"\x3a\x21" + public, public.hex())
        public = raw[:32]
        return KeyPair(b"\x12\x20" + public, public.hex())

    # ids ---------------------------------------------------------------------------------------------------------

    @staticmethod
    def account_num(index: int) -> int:
        return FIRST_USER_NUM + index

    def contract_num(self, index: int) -> int:
        return FIRST_USER_NUM + self.accounts + index

    def token_num(self, index: int) -> int:
        return FIRST_USER_NUM + self.accounts + self.contracts + index

    # tokens ------------------------------------------------------------------------------------------------------

    @staticmethod
    def is_nft(token: int) -> bool:
        return token % 10 in _NFT_SLOTS

    @staticmethod
    def fungible_token(rank: int) -> int:
        """The token index of the ``rank``-th fungible token."""
        return rank // 7 * 10 + _FUNGIBLE_SLOTS[rank % 7]

    @staticmethod
    def nft_token(rank: int) -> int:
        """The token index of the ``rank``-th non-fungible token."""
        return rank // 3 * 10 + _NFT_SLOTS[rank % 3]

    def treasury_of(self, token: int) -> int:
        """The account index of a token's treasury."""
        return (self._perm_a * token + self._perm_b) % self.accounts

    def treasury_token(self, account: int) -> int | None:
        """The token an account is treasury of, if any."""
        token = (account - self._perm_b) * self._perm_inverse % self.accounts
        return token if token < self.tokens else None

    # accounts ----------------------------------------------------------------------------------------------------

    def is_deleted(self, account: int) -> bool:
        """About 1 % of accounts are deleted; treasuries never are."""
        return self.hash(Tag.ACCOUNT, account) % 97 == 0 and self.treasury_token(account) is None

    def staked_node(self, account: int) -> int:
        """The node an account stakes to, or -1."""
        bits = self.hash(Tag.ACCOUNT, account) >> 16
        return (bits >> 4) % len(NODE_ACCOUNTS) if bits % 10 < 3 else -1

    def staked_account(self, account: int) -> int | None:
        """The (earlier, live) account index an account stakes to, if it stakes to an account."""
        bits = self.hash(Tag.ACCOUNT, account)
        if account == 0 or (bits >> 16) % 10 != 3:
            return None
        target = (bits >> 40) % account
        return None if self.is_deleted(target) else target

    def declines_reward(self, account: int) -> bool:
        return (self.hash(Tag.ACCOUNT, account) >> 24) % 5 == 0

    def pick_account(self, rng: random.Random, available: int, *, exclude: int = -1) -> int | None:
        """A random live account index below ``available`` other than ``exclude``; None if none was found."""
        if available <= 0:
            return None
        for _ in range(8):
            account = rng.randrange(available)
            if account != exclude and not self.is_deleted(account):
                return account
        return None

    def sample_accounts(self, rng: random.Random, count: int, *, exclude: tuple[int, ...] = ()) -> list[int]:
        """Up to ``count`` distinct live account indexes, none in ``exclude``."""
        if count <= 0:
            return []
        wanted = min(self.accounts, count + len(exclude) + 4)
        chosen = [
            a for a in rng.sample(range(self.accounts), wanted) if a not in exclude and not self.is_deleted(a)
        ]
        return chosen[:count]

    # timeline ----------------------------------------------------------------------------------------------------

    def block_start(self, block: int) -> int:
        return self.start + block * self.block_interval

    def first_entity(self, block: int) -> int:
        """The ordinal of the first entity created in ``block`` or later (``entities`` past the last)."""
        if block >= self.creation_blocks:
            return self.entities
        return -(-block * self.entities // self.creation_blocks)

    def transfers_in(self, block: int) -> int:
        total = self.transfers
        return total * (block + 1) // self.blocks - total * block // self.blocks

    def block_slots(self, block: int) -> tuple[int, int, int]:
        """``(first creation ordinal, creations, slots)`` of a block; each event takes one slot."""
        first = self.first_entity(block)
        creations = self.first_entity(block + 1) - first
        return first, creations, creations + self.transfers_in(block)

    def creation_slot(self, ordinal: int) -> tuple[int, int]:
        """``(block, slot)`` of an entity creation: creations spread evenly over their block's slots."""
        block = ordinal * self.creation_blocks // self.entities
        first, creations, slots = self.block_slots(block)
        return block, (ordinal - first) * slots // creations

    def between_blocks(self, at: int) -> int:
        """``at`` moved into the last quarter of its block's gap (after the block window and the second after it):
        the blocks' transactions lie in the windows, topic messages and schedules in the first half of the gaps,
        so events placed this way (NFT mints, transfers and burns) never share a consensus timestamp with them.
        The mapping keeps the order of times a second or more apart."""
        block, offset = divmod(at - self.start, self.block_interval)
        gap = self.block_interval - self.block_window - SECOND
        if gap < 8 or not 0 <= block < self.blocks:
            return at
        quarter = gap // 4
        return (
            self.block_start(block)
            + self.block_window
            + SECOND
            + gap
            - quarter
            + offset * quarter // self.block_interval
        )

    def slot_time(self, block: int, slot: int, slots: int, jitter: int) -> int:
        gap = self.block_window // slots
        return self.block_start(block) + slot * gap + jitter % gap

    def created(self, ordinal: int) -> int:
        """The consensus timestamp of the creation of user entity ``ordinal`` (accounts, contracts, tokens)."""
        block, slot = self.creation_slot(ordinal)
        return self.slot_time(block, slot, self.block_slots(block)[2], self.hash(Tag.JITTER, ordinal))

    def account_created(self, account: int) -> int:
        return self.created(account)

    def contract_created(self, contract: int) -> int:
        return self.created(self.accounts + contract)

    def token_created(self, token: int) -> int:
        return self.created(self.accounts + self.contracts + token)

    def snapshot_times(self) -> list[int]:
        """Balance snapshot timestamps: one a day, the last one on the final day."""
        count = self.profile.balance_snapshots
        return [self.end - (count - index) * DAY + 3_600 * SECOND + 123_456_789 for index in range(count)]

    def stake_update_time(self, epoch_day: int) -> int:
        """When the staking period ``epoch_day`` was closed (shortly after the following midnight)."""
        return (epoch_day + 1) * DAY + 17 * SECOND + 431_000_001
