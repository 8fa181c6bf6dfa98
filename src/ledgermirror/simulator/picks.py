"""Shared picks of the generators: payers with enough balance, fresh keys, fees with a little jitter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ledgermirror.simulator.emitter import Emitter
from ledgermirror.simulator.ledger_state import Account

T = TypeVar("T")

HBAR = 100_000_000
_ATTEMPTS = 8

FEES = {
    "cryptoTransfer": 200_000,
    "cryptoTransferAlias": 100_000_000,
    "cryptoCreateAccount": 100_000_000,
    "cryptoUpdateAccount": 440_000,
    "cryptoDelete": 10_000_000,
    "cryptoApproveAllowance": 100_000_000,
    "cryptoDeleteAllowance": 100_000_000,
    "tokenCreation": 2_000_000_000,
    "tokenAssociate": 100_000_000,
    "tokenMint": 2_000_000,
    "tokenMintNft": 40_000_000,
    "tokenBurn": 2_000_000,
    "tokenTransfer": 2_000_000,
    "tokenAirdrop": 100_000_000,
    "tokenDissociate": 100_000_000,
    "tokenUpdate": 20_000_000,
    "tokenFreeze": 2_000_000,
    "tokenReject": 2_000_000,
    "fileCreate": 100_000_000,
    "contractUpdate": 50_000_000,
    "contractDelete": 1_500_000,
    "nodeUpdate": 20_000_000,
    "hookStore": 1_000_000,
    "atomicBatch": 2_000_000,
    "consensusUpdateTopic": 400_000,
    "consensusDeleteTopic": 10_000_000,
    "scheduleDelete": 10_000_000,
    "consensusCreateTopic": 20_000_000,
    "consensusSubmitMessage": 200_000,
    "scheduleCreate": 20_000_000,
    "scheduleSign": 2_000_000,
    "util_prng": 2_000_000,
    "contractCreateInstance": 2_000_000_000,
    "contractCall": 100_000_000,
    "ethereumTransaction": 100_000_000,
}
"""Typical charged fees in tinybars (a few hundredths of a US cent to a dollar at 5 cents per hbar)."""


def fee(em: Emitter, kind: str) -> int:
    base = FEES[kind]
    return base + em.rng.randrange(base // 10 + 1)


def payer(em: Emitter, minimum: int, exclude: tuple[int, ...] = ()) -> int | None:
    """A random live user holding at least ``minimum`` tinybars, or ``None``."""
    users = em.ledger.users
    if not users:
        return None
    for _ in range(_ATTEMPTS):
        num = em.rng.choice(users)
        if num not in exclude and em.ledger.balance(num) >= minimum:
            return num
    return None


def sample(em: Emitter, items: Sequence[T], accept: Callable[[T], bool] = lambda _: True) -> T | None:
    """A random element of ``items`` that ``accept`` takes (a few tries, so the cost does not grow with
    the ledger), or ``None``."""
    if not items:
        return None
    for _ in range(_ATTEMPTS):
        item = em.rng.choice(items)
        if accept(item):
            return item
    return None


def other_user(em: Emitter, *exclude: int) -> int | None:
    users = em.ledger.users
    for _ in range(_ATTEMPTS):
        num = em.rng.choice(users)
        if num not in exclude:
            return num
    return None


def ed25519_key(em: Emitter) -> bytes:
    """A serialized ``Key`` holding a fresh 32-byte ED25519 public key (random bytes: nobody signs)."""
    return b"\x12\x20" + em.rng.randbytes(32)


def key_message(em: Emitter, serialized: bytes) -> object:
    return em.hapi.basic.Key.FromString(serialized)


def memo(em: Emitter, words: tuple[str, ...]) -> str:
    return " ".join(em.rng.choice(words) for _ in range(em.rng.randrange(1, 4)))


def add_user(
    em: Emitter,
    num: int,
    key: bytes,
    created: int,
    *,
    memo: str = "",
    alias: bytes = b"",
    max_automatic_token_associations: int = 0,
    staked_node_id: int | None = None,
) -> Account:
    """A new live user account in the ledger."""
    account = Account(
        num,
        key,
        created,
        memo=memo,
        alias=alias,
        max_automatic_token_associations=max_automatic_token_associations,
        staked_node_id=staked_node_id,
    )
    em.ledger.accounts[num] = account
    em.ledger.users.append(num)
    return account
