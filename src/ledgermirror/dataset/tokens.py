"""Tokens: per-token facts (kind, keys, supply, treasury), their ``entity`` rows, ``token`` rows and the default
``custom_fee`` row of each token.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from asyncpg import Range

from ledgermirror.dataset.accounts import entity_record
from ledgermirror.dataset.tables import CUSTOM_FEE, ENTITY, TOKEN, Emit, Record
from ledgermirror.dataset.world import DAY, POW10, SECOND, Tag, World, entity_id
from ledgermirror.ledger.int64 import INT64_MAX as MAX_INT64

NOT_APPLICABLE = 0
FROZEN = 1
UNFROZEN = 2
GRANTED = 1
REVOKED = 2

_PREFIXES = (
    "Hashgraph", "Aurora", "Cedar", "Nimbus", "Harbor", "Quartz", "Solstice", "Meridian", "Ember", "Tidal",
    "Granite", "Lumen", "Orchid", "Pioneer", "Summit", "Velvet", "Atlas", "Beacon", "Copper", "Juniper",
    "Kestrel", "Sierra", "Willow", "Zephyr",
)  # fmt: skip
_NOUNS = (
    "Coffee", "Garden", "Transit", "Energy", "Music", "Fitness", "Bakery", "Library", "Market", "Studio",
    "Cinema", "Arcade", "Vineyard", "Brewery", "Airline", "Hotel", "Farm", "Gallery", "Theater", "Bike",
    "Ferry", "Stadium", "Museum", "Kitchen",
)  # fmt: skip
_FUNGIBLE_SUFFIXES = ("Points", "Coin", "Credits", "Token", "Dollar", "Rewards", "Shares", "Miles")
_NFT_SUFFIXES = ("Collectibles", "Badges", "Tickets", "Passes", "Art", "Cards", "Relics", "Stamps")
_NAME_SPACE = len(_PREFIXES) * len(_NOUNS) * len(_FUNGIBLE_SUFFIXES)
_NAME_STRIDE = 2_713  # coprime with _NAME_SPACE: the first _NAME_SPACE tokens get distinct names
_TOKEN_MEMOS = ("", "", "", "loyalty programme", "community token", "issued under the 2022 pilot", "beta")


@dataclass(frozen=True, slots=True)
class TokenFacts:
    index: int
    num: int
    nft: bool
    created: int
    treasury: int  # account index
    decimals: int
    initial_supply: int
    total_supply: int
    max_supply: int
    serials: int  # NFTs minted (non-fungible only)
    freeze_key: bool
    freeze_default: bool
    kyc_key: bool
    pause_key: bool
    paused: bool
    wipe_key: bool
    fee_schedule_key: bool
    metadata_key: bool
    supply_key: bool
    finite: bool
    deleted: bool
    has_metadata: bool

    @property
    def id(self) -> int:
        return entity_id(self.num)

    @property
    def freeze_status(self) -> int:
        """The status a new association starts with (also the token's own ``freeze_status``)."""
        if not self.freeze_key:
            return NOT_APPLICABLE
        return FROZEN if self.freeze_default else UNFROZEN

    @property
    def kyc_status(self) -> int:
        return REVOKED if self.kyc_key else NOT_APPLICABLE


def nft_burned(world: World, token: int, serial: int) -> bool:
    """About 3 % of minted NFTs are burned."""
    return world.hash(Tag.NFT, token * 1_000_003 + serial) % 33 == 0


def token_facts(world: World, token: int) -> TokenFacts:
    bits = world.hash(Tag.TOKEN, token)
    nft = world.is_nft(token)
    finite = (bits >> 22) % 3 == 0
    supply_key = nft or (bits >> 20) % 2 == 0
    if nft:
        mean = world.profile.nfts / max(1, world.nft_tokens)
        serials = 1 + (bits >> 30) % max(1, round(2 * mean) - 1)
        decimals = initial = 0
        total = serials - sum(1 for serial in range(1, serials + 1) if nft_burned(world, token, serial))
        maximum = serials * 2 + 100 if finite else MAX_INT64
    else:
        serials = 0
        decimals = (0, 2, 4, 6, 8)[bits % 5]
        initial = ((bits >> 30) % 9 + 1) * POW10[5 + (bits >> 34) % 5] * POW10[decimals]
        total = initial + (initial * ((bits >> 38) % 3) // 4 if supply_key else 0)
        maximum = total * 2 if finite else MAX_INT64
    freeze_key = (bits >> 4) % 3 == 0
    pause_key = (bits >> 10) % 4 == 0
    return TokenFacts(
        index=token, num=world.token_num(token), nft=nft, created=world.token_created(token),
        treasury=world.treasury_of(token), decimals=decimals, initial_supply=initial, total_supply=total,
        max_supply=maximum, serials=serials, freeze_key=freeze_key,
        freeze_default=freeze_key and (bits >> 6) % 4 == 0, kyc_key=(bits >> 8) % 4 == 0, pause_key=pause_key,
        paused=pause_key and (bits >> 12) % 5 == 0, wipe_key=(bits >> 14) % 3 == 0,
        fee_schedule_key=(bits >> 16) % 4 == 0, metadata_key=(bits >> 18) % 5 == 0, supply_key=supply_key,
        finite=finite, deleted=(bits >> 26) % 50 == 0, has_metadata=(bits >> 42) % 3 == 0,
    )  # fmt: skip


def token_name(token: int, nft: bool) -> tuple[str, str]:
    """A readable name and its initials as the symbol, e.g. ("Hashgraph Coffee Points", "HCP")."""
    combination = (token * _NAME_STRIDE) % _NAME_SPACE
    prefix = _PREFIXES[combination % len(_PREFIXES)]
    noun = _NOUNS[combination // len(_PREFIXES) % len(_NOUNS)]
    suffixes = _NFT_SUFFIXES if nft else _FUNGIBLE_SUFFIXES
    suffix = suffixes[combination // (len(_PREFIXES) * len(_NOUNS)) % len(suffixes)]
    return f"{prefix} {noun} {suffix}", prefix[0] + noun[0] + suffix[0]


def content_uri(world: World, label: str, index: int) -> str:
    """An IPFS-style URI (a CIDv1-looking base32 string), fixed by (seed, label, index)."""
    cid = base64.b32encode(world.digest(label, index, 32)).decode().rstrip("=").lower()
    return f"ipfs://bafkrei{cid[:52]}"


def token_key(world: World, token: int, role: str, present: bool) -> bytes | None:
    return world.key_pair(f"token-{role}", token, ecdsa=False).key if present else None


def modified_at(world: World, facts: TokenFacts) -> int:
    """When a token's current version began: its creation, or a later pause or deletion."""
    if facts.paused or facts.deleted:
        later = facts.created + SECOND + world.hash(Tag.TOKEN_KEY, facts.index) % (10 * DAY)
        return min(later, world.end - SECOND)
    return facts.created


def _token_record(world: World, facts: TokenFacts) -> Record:
    token = facts.index
    name, symbol = token_name(token, facts.nft)
    pause_status = ("PAUSED" if facts.paused else "UNPAUSED") if facts.pause_key else "NOT_APPLICABLE"
    metadata = content_uri(world, "token-metadata", token).encode() if facts.has_metadata else None
    return (
        facts.id, facts.created, facts.decimals, facts.freeze_default,
        token_key(world, token, "freeze", facts.freeze_key), facts.initial_supply,
        token_key(world, token, "kyc", facts.kyc_key), name, token_key(world, token, "supply", facts.supply_key),
        symbol, facts.total_supply, entity_id(world.account_num(facts.treasury)),
        token_key(world, token, "wipe", facts.wipe_key), facts.max_supply,
        "FINITE" if facts.finite else "INFINITE", "NON_FUNGIBLE_UNIQUE" if facts.nft else "FUNGIBLE_COMMON",
        token_key(world, token, "fee-schedule", facts.fee_schedule_key),
        token_key(world, token, "pause", facts.pause_key), pause_status,
        Range(modified_at(world, facts), None), facts.freeze_status, facts.kyc_status, metadata,
        token_key(world, token, "metadata", facts.metadata_key),
    )  # fmt: skip


def tokens(world: World) -> Emit:
    """For each token: its ``entity`` row (admin key), ``token`` row and default ``custom_fee`` row."""
    for token in range(world.tokens):
        facts = token_facts(world, token)
        bits = world.hash(Tag.TOKEN_KEY, token)
        admin = world.key_pair("token-admin", token, ecdsa=(bits >> 8) % 4 == 0)
        yield ENTITY, entity_record(
            facts.num, "TOKEN", facts.created, key=admin.key, public_key=admin.public_key,
            memo=_TOKEN_MEMOS[(bits >> 16) % len(_TOKEN_MEMOS)], modified=modified_at(world, facts),
            deleted=facts.deleted, auto_renew_account=entity_id(world.account_num(facts.treasury)),
        )  # fmt: skip
        yield TOKEN, _token_record(world, facts)
        yield CUSTOM_FEE, (facts.id, Range(facts.created, None), None, None, None)
