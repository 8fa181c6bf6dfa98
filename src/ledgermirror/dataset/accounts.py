"""Accounts and contracts: ``entity`` rows for system and user accounts, contracts (with ``contract`` rows) and
system files, plus ``crypto_allowance``, ``entity_stake`` and ``account_balance`` snapshots.
"""

from __future__ import annotations

from asyncpg import Range

from ledgermirror.dataset.tables import (
    ACCOUNT_BALANCE,
    CONTRACT,
    CRYPTO_ALLOWANCE,
    ENTITY,
    ENTITY_STAKE,
    Emit,
    Record,
)
from ledgermirror.dataset.world import (
    AUTO_RENEW_PERIOD,
    DAY,
    FEE_COLLECTOR,
    HBAR,
    NODE_ACCOUNTS,
    NODE_REWARD,
    POW10,
    REALM,
    SECOND,
    SHARD,
    STAKING_REWARD,
    SYSTEM_ACCOUNTS,
    SYSTEM_CREATED,
    SYSTEM_FILES,
    TREASURY,
    Tag,
    World,
    between,
    count_around,
    entity_id,
)

_ACCOUNT_MEMOS = (
    "", "", "", "", "", "payroll", "cold storage", "treasury operations", "Hashgraph Coffee loyalty wallet",
    "market maker", "savings", "dev wallet", "grant recipient", "exchange hot wallet", "family account",
)  # fmt: skip
_CONTRACT_MEMOS = ("Escrow", "Token vault", "Swap router v2", "Staking pool", "NFT marketplace", "DAO governor")
_RUNTIME_PREFIX = bytes.fromhex("608060405234801561001057600080fd5b50")
_SYSTEM_BALANCES = {
    TREASURY: 3_000_000_000 * HBAR,
    FEE_COLLECTOR: 42_000 * HBAR,
    STAKING_REWARD: 250_000_000 * HBAR,
    NODE_REWARD: 1_500_000 * HBAR,
}
_SYSTEM_MEMOS = {TREASURY: "treasury", FEE_COLLECTOR: "fee collection", STAKING_REWARD: "staking reward account",
                 NODE_REWARD: "node reward account"}  # fmt: skip


def entity_record(
    num: int,
    kind: str,
    created: int,
    *,
    key: bytes | None = None,
    public_key: str | None = None,
    alias: bytes | None = None,
    evm_address: bytes | None = None,
    memo: str = "",
    modified: int | None = None,
    deleted: bool = False,
    auto_renew_account: int | None = None,
    receiver_sig_required: bool | None = None,
    max_automatic_token_associations: int | None = None,
    ethereum_nonce: int | None = None,
    decline_reward: bool = False,
    staked_account: int | None = None,
    staked_node: int = -1,
    stake_period_start: int = -1,
    balance: int | None = None,
    balance_timestamp: int | None = None,
) -> Record:
    """One ``entity`` row in :data:`ENTITY` column order."""
    return (
        entity_id(num), SHARD, REALM, num, kind, key, public_key, alias, evm_address, memo, created,
        Range(created if modified is None else modified, None), deleted, created + AUTO_RENEW_PERIOD * SECOND,
        AUTO_RENEW_PERIOD, auto_renew_account, receiver_sig_required,
        max_automatic_token_associations, ethereum_nonce, decline_reward,
        staked_account, staked_node, stake_period_start, balance, balance_timestamp,
    )  # fmt: skip


def account_balance(world: World, account: int) -> int:
    """The current hbar balance of a user account (0 once deleted)."""
    if world.is_deleted(account):
        return 0
    bits = world.hash(Tag.ACCOUNT_MORE, account)
    return ((bits >> 8) % 9_000 + 1_000) * POW10[bits % 9 + 2]


def balance_at(world: World, entity: int, base: int, snapshot: int, last: bool) -> int:
    """The balance at a snapshot: the current one at the last snapshot, within ±10 % before it."""
    if last:
        return base
    return base * (90 + world.hash(Tag.BALANCE, entity * 64 + snapshot) % 21) // 100


def _deleted_at(world: World, account: int, created: int) -> int:
    return between(world.rng(Tag.ACCOUNT_MORE, account), created + SECOND, world.end - DAY)


def _stake_period_start(world: World, account: int, created: int) -> int:
    first_day = created // DAY + 1
    return first_day + world.hash(Tag.STAKE, account) % max(1, world.last_epoch_day - first_day + 1)


def _system_entities(world: World) -> Emit:
    for num in sorted((*SYSTEM_ACCOUNTS, *SYSTEM_FILES)):
        created = SYSTEM_CREATED + num * SECOND
        pair = world.key_pair("system", num, ecdsa=False)
        if num in SYSTEM_FILES:
            yield ENTITY, entity_record(num, "FILE", created, key=pair.key, public_key=pair.public_key)
            continue
        balance = _SYSTEM_BALANCES.get(num, 5_000 * HBAR)
        yield ENTITY, entity_record(
            num, "ACCOUNT", created, key=pair.key, public_key=pair.public_key,
            memo=_SYSTEM_MEMOS.get(num, f"node account {num}" if num in NODE_ACCOUNTS else ""),
            receiver_sig_required=False, max_automatic_token_associations=0, ethereum_nonce=0, balance=balance,
            balance_timestamp=world.end - SECOND,
        )  # fmt: skip


def _account(world: World, account: int) -> Record:
    bits = world.hash(Tag.ACCOUNT, account)
    more = world.hash(Tag.ACCOUNT_MORE, account)
    num = world.account_num(account)
    created = world.account_created(account)
    ecdsa = (bits >> 8) % 3 == 0
    pair = world.key_pair("account", account, ecdsa=ecdsa)
    alias = pair.key if (bits >> 12) % 4 == 0 else None
    evm_address = world.digest("evm", account, 20) if alias is not None and ecdsa else None
    deleted = world.is_deleted(account)
    staked_node = world.staked_node(account)
    target = world.staked_account(account)
    staked_account = None if target is None else entity_id(world.account_num(target))
    staking = staked_node >= 0 or staked_account is not None
    balance = account_balance(world, account)
    return entity_record(
        num, "ACCOUNT", created, key=pair.key, public_key=pair.public_key, alias=alias,
        evm_address=evm_address, memo=_ACCOUNT_MEMOS[(bits >> 32) % len(_ACCOUNT_MEMOS)],
        modified=_deleted_at(world, account, created) if deleted else None, deleted=deleted,
        receiver_sig_required=(bits >> 28) % 20 == 0,
        max_automatic_token_associations=(0, 0, 0, 5, 10, -1)[(bits >> 36) % 6],
        ethereum_nonce=(more >> 24) % 40 if ecdsa else 0,
        decline_reward=staking and world.declines_reward(account),
        staked_account=staked_account, staked_node=staked_node,
        stake_period_start=_stake_period_start(world, account, created) if staking else -1, balance=balance,
        balance_timestamp=between(world.rng(Tag.BALANCE, account), created, world.end),
    )  # fmt: skip


def contract_balance(world: World, contract: int) -> int:
    return world.hash(Tag.CONTRACT, contract) % 50_000 * HBAR


def _contract(world: World, contract: int) -> tuple[Record, Record]:
    bits = world.hash(Tag.CONTRACT, contract)
    num = world.contract_num(contract)
    created = world.contract_created(contract)
    keyed = bits % 2 == 0
    pair = world.key_pair("contract", contract, ecdsa=False)
    entity = entity_record(
        num, "CONTRACT", created, key=pair.key if keyed else b"\x32\x00",
        public_key=pair.public_key if keyed else None,
        evm_address=world.digest("create2", contract, 20) if (bits >> 4) % 3 == 0 else None,
        memo=_CONTRACT_MEMOS[(bits >> 8) % len(_CONTRACT_MEMOS)],
        max_automatic_token_associations=0, ethereum_nonce=1, balance=contract_balance(world, contract),
        balance_timestamp=created,
    )  # fmt: skip
    bytecode = _RUNTIME_PREFIX + world.digest("bytecode", contract, 64) * (1 + (bits >> 16) % 4)
    return entity, (entity_id(num), None, None, bytecode)


def entities(world: World) -> Emit:
    """System accounts and files, user accounts, then contracts."""
    yield from _system_entities(world)
    for account in range(world.accounts):
        yield ENTITY, _account(world, account)
    for contract in range(world.contracts):
        entity, code = _contract(world, contract)
        yield ENTITY, entity
        yield CONTRACT, code


def crypto_allowances(world: World) -> Emit:
    """hbar allowances from live owners to live spenders, granted after both existed."""
    mean = world.profile.crypto_allowances / world.accounts
    for owner in range(world.accounts):
        if world.is_deleted(owner):
            continue
        rng = world.rng(Tag.CRYPTO_ALLOWANCE, owner)
        spenders = world.sample_accounts(rng, count_around(rng, mean), exclude=(owner,))
        owner_id = entity_id(world.account_num(owner))
        owner_created = world.account_created(owner)
        for spender in spenders:
            granted = rng.randrange(1, 5_000) * HBAR
            spent = rng.randrange(granted + 1) if rng.random() < 0.4 else 0
            since = max(owner_created, world.account_created(spender)) + SECOND
            yield CRYPTO_ALLOWANCE, (
                owner_id, entity_id(world.account_num(spender)), granted, granted - spent, owner_id,
                Range(between(rng, since, world.end), None),
            )  # fmt: skip


def entity_stakes(world: World) -> Emit:
    """One current ``entity_stake`` row per live staking account, for the last completed staking day."""
    day = world.last_epoch_day
    since = Range(world.stake_update_time(day), None)
    for account in range(world.accounts):
        node = world.staked_node(account)
        if world.is_deleted(account) or (node < 0 and world.staked_account(account) is None):
            continue
        balance = account_balance(world, account)
        declines = world.declines_reward(account) or node < 0
        reward = 0 if declines else balance // 2_000 * (1 + world.hash(Tag.STAKE, account) % 5)
        yield (
            ENTITY_STAKE,
            (
                entity_id(world.account_num(account)),
                day,
                reward,
                node,
                0,
                balance if node >= 0 else 0,
                since,
            ),
        )


def account_balances(world: World) -> Emit:
    """Full snapshots: every account, contract and system account that existed at each snapshot time."""
    snapshots = world.snapshot_times()
    last = len(snapshots) - 1
    for number, at in enumerate(snapshots):
        for num in SYSTEM_ACCOUNTS:
            base = _SYSTEM_BALANCES.get(num, 5_000 * HBAR)
            yield ACCOUNT_BALANCE, (at, entity_id(num), balance_at(world, num, base, number, number == last))
    for account in range(world.accounts):
        created = world.account_created(account)
        gone = _deleted_at(world, account, created) if world.is_deleted(account) else world.end
        base = account_balance(world, account) or world.hash(Tag.ACCOUNT_MORE, account) % 1_000 * HBAR
        num = world.account_num(account)
        for number, at in enumerate(snapshots):
            if created < at < gone:
                yield ACCOUNT_BALANCE, (at, entity_id(num), balance_at(world, num, base, number, number == last))
    for contract in range(world.contracts):
        created = world.contract_created(contract)
        num = world.contract_num(contract)
        base = contract_balance(world, contract)
        for number, at in enumerate(snapshots):
            if created < at:
                yield ACCOUNT_BALANCE, (at, entity_id(num), balance_at(world, num, base, number, number == last))
