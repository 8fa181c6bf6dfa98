"""Accounts and contracts: ``entity`` rows for system and user accounts, contracts (with ``contract`` rows) and
system files, plus ``crypto_allowance``, ``entity_stake`` and ``account_balance`` snapshots.

About one account in eight was updated after its creation (a new memo, and a rotated key unless the account
has a key alias), and deleted accounts were live before their deletion: each earlier version is an
``entity_history`` row, so historical account queries have something to show.
"""

from __future__ import annotations

from asyncpg import Range

from ledgermirror.dataset import evm_code
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
    Emit,
    Row,
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


def entity_row(num: int, kind: str, created: int, *, since: int | None = None, **columns: object) -> Row:
    """One ``entity`` row: the id columns, type, creation, the 90-day renewal and the range of the current
    version (from ``since``, else from creation), plus ``columns``; every other column gets its default.
    ``deleted`` is false and ``ethereum_nonce`` NULL unless given."""
    return {
        "id": entity_id(num), "shard": SHARD, "realm": REALM, "num": num, "type": kind,
        "created_timestamp": created, "timestamp_range": Range(created if since is None else since, None),
        "deleted": False,
        "expiration_timestamp": created + AUTO_RENEW_PERIOD * SECOND, "auto_renew_period": AUTO_RENEW_PERIOD,
        "ethereum_nonce": None, **columns,
    }  # fmt: skip


def superseded(row: Row, until: int, **changes: object) -> Row:
    """The version of ``row`` that was current from its creation until ``until``, with ``changes``."""
    return {**row, "timestamp_range": Range(row["created_timestamp"], until), **changes}


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
            yield "entity", entity_row(num, "FILE", created, key=pair.key, public_key=pair.public_key)
            continue
        balance = _SYSTEM_BALANCES.get(num, 5_000 * HBAR)
        yield "entity", entity_row(
            num, "ACCOUNT", created, key=pair.key, public_key=pair.public_key,
            memo=_SYSTEM_MEMOS.get(num, f"node account {num}" if num in NODE_ACCOUNTS else ""),
            receiver_sig_required=False, max_automatic_token_associations=0, ethereum_nonce=0, balance=balance,
            balance_timestamp=world.end - SECOND,
        )  # fmt: skip


def _updated_at(world: World, account: int, created: int) -> int | None:
    """When a live account was last updated (about one in eight), else None."""
    bits = world.hash(Tag.HISTORY, account)
    if bits % 8 != 0 or world.is_deleted(account):
        return None
    return between(world.rng(Tag.HISTORY, account), created + SECOND, world.end - DAY)


def _account(world: World, account: int) -> Emit:
    """The current ``entity`` row of an account, and its earlier version if it had one."""
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
    deleted_at = _deleted_at(world, account, created) if deleted else None
    updated_at = _updated_at(world, account, created)
    memo = _ACCOUNT_MEMOS[(bits >> 32) % len(_ACCOUNT_MEMOS)]
    row = entity_row(
        num, "ACCOUNT", created, since=deleted_at or updated_at, key=pair.key, public_key=pair.public_key,
        alias=alias, evm_address=evm_address, memo=memo, deleted=deleted,
        receiver_sig_required=(bits >> 28) % 20 == 0,
        max_automatic_token_associations=(0, 0, 0, 5, 10, -1)[(bits >> 36) % 6],
        ethereum_nonce=(more >> 24) % 40 if ecdsa else 0,
        decline_reward=staking and world.declines_reward(account),
        staked_account_id=staked_account, staked_node_id=staked_node,
        stake_period_start=_stake_period_start(world, account, created) if staking else -1,
        balance=account_balance(world, account),
        balance_timestamp=between(world.rng(Tag.BALANCE, account), created, world.end),
    )  # fmt: skip
    yield "entity", row
    if deleted_at is not None:
        yield "entity", superseded(row, deleted_at, deleted=False)
    elif updated_at is not None:
        before = _ACCOUNT_MEMOS[(bits >> 32) % (len(_ACCOUNT_MEMOS) - 1) + 1] if memo == "" else ""
        if alias is not None:
            yield "entity", superseded(row, updated_at, memo=before)
        else:
            old = world.key_pair("account-before", account, ecdsa=ecdsa)
            yield "entity", superseded(row, updated_at, memo=before, key=old.key, public_key=old.public_key)


def contract_balance(world: World, contract: int) -> int:
    return world.hash(Tag.CONTRACT, contract) % 50_000 * HBAR


def _contract(world: World, contract: int) -> tuple[Row, Row]:
    bits = world.hash(Tag.CONTRACT, contract)
    num = world.contract_num(contract)
    created = world.contract_created(contract)
    keyed = bits % 2 == 0
    pair = world.key_pair("contract", contract, ecdsa=False)
    entity = entity_row(
        num, "CONTRACT", created, key=pair.key if keyed else b"\x32\x00",
        public_key=pair.public_key if keyed else None,
        evm_address=world.digest("create2", contract, 20) if (bits >> 4) % 3 == 0 else None,
        memo=_CONTRACT_MEMOS[(bits >> 8) % len(_CONTRACT_MEMOS)],
        max_automatic_token_associations=0, ethereum_nonce=1, balance=contract_balance(world, contract),
        balance_timestamp=created,
    )  # fmt: skip
    compiled = evm_code.kind(contract)
    if compiled is None:
        bytecode = _RUNTIME_PREFIX + world.digest("bytecode", contract, 64) * (1 + (bits >> 16) % 4)
    else:
        bytecode = evm_code.runtime(compiled)
    return entity, {"id": entity_id(num), "runtime_bytecode": bytecode}


def entities(world: World) -> Emit:
    """System accounts and files, user accounts, then contracts."""
    yield from _system_entities(world)
    for account in range(world.accounts):
        yield from _account(world, account)
    for contract in range(world.contracts):
        entity, code = _contract(world, contract)
        yield "entity", entity
        yield "contract", code


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
            yield "crypto_allowance", {
                "owner": owner_id, "spender": entity_id(world.account_num(spender)), "amount_granted": granted,
                "amount": granted - spent, "payer_account_id": owner_id,
                "timestamp_range": Range(between(rng, since, world.end), None),
            }  # fmt: skip


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
        yield "entity_stake", {
            "id": entity_id(world.account_num(account)), "end_stake_period": day, "pending_reward": reward,
            "staked_node_id_start": node, "staked_to_me": 0, "stake_total_start": balance if node >= 0 else 0,
            "timestamp_range": since,
        }  # fmt: skip


def _balance(at: int, num: int, balance: int) -> Row:
    return {"consensus_timestamp": at, "account_id": entity_id(num), "balance": balance}


def account_balances(world: World) -> Emit:
    """Full snapshots: every account, contract and system account that existed at each snapshot time."""
    snapshots = world.snapshot_times()
    last = len(snapshots) - 1
    for number, at in enumerate(snapshots):
        for num in SYSTEM_ACCOUNTS:
            base = _SYSTEM_BALANCES.get(num, 5_000 * HBAR)
            yield "account_balance", _balance(at, num, balance_at(world, num, base, number, number == last))
    for account in range(world.accounts):
        created = world.account_created(account)
        gone = _deleted_at(world, account, created) if world.is_deleted(account) else world.end
        base = account_balance(world, account) or world.hash(Tag.ACCOUNT_MORE, account) % 1_000 * HBAR
        num = world.account_num(account)
        for number, at in enumerate(snapshots):
            if created < at < gone:
                yield "account_balance", _balance(at, num, balance_at(world, num, base, number, number == last))
    for contract in range(world.contracts):
        created = world.contract_created(contract)
        num = world.contract_num(contract)
        base = contract_balance(world, contract)
        for number, at in enumerate(snapshots):
            if created < at:
                yield "account_balance", _balance(at, num, balance_at(world, num, base, number, number == last))
