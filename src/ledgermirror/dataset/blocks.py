"""Blocks and the transactions in them: ``record_file`` rows with a chained SHA-384 running hash, and for every
transaction its ``transaction``, ``transaction_hash`` and ``crypto_transfer`` rows, plus ``token_transfer`` and
``staking_reward_transfer`` rows where they apply.

Each block holds the creations of the entities that :class:`~ledgermirror.dataset.world.World` places in it
(CRYPTOCREATEACCOUNT, CONTRACTCREATEINSTANCE, TOKENCREATION, at exactly the entities' ``created_timestamp``)
and its share of transfers (CRYPTOTRANSFER of hbar or of a fungible token the payer holds), paid by accounts
created in earlier blocks. Every transfer list sums to zero and carries the fee split to the node, 0.0.98 and
0.0.800.
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime

from ledgermirror.dataset import contracts, evm_code
from ledgermirror.dataset.associations import fungible_associations
from ledgermirror.dataset.tokens import token_facts
from ledgermirror.dataset.world import (
    FEE_COLLECTOR,
    HBAR,
    NODE_ACCOUNTS,
    POW10,
    SECOND,
    STAKING_REWARD,
    TREASURY,
    Emit,
    Row,
    Tag,
    World,
    entity_id,
)
from ledgermirror.ledger.transaction_codes import CONTRACTCREATEINSTANCE as CONTRACT_CREATE
from ledgermirror.ledger.transaction_codes import CRYPTOCREATEACCOUNT as CRYPTO_CREATE
from ledgermirror.ledger.transaction_codes import CRYPTOTRANSFER as CRYPTO_TRANSFER_TYPE
from ledgermirror.ledger.transaction_codes import INSUFFICIENT_ACCOUNT_BALANCE, SUCCESS
from ledgermirror.ledger.transaction_codes import TOKENCREATION as TOKEN_CREATE

_VALID_DURATION = 120
_MEMOS = (b"coffee", b"rent share", b"invoice 2291", b"thanks!", b"payroll run", b"refund", b"gm")
_FIRST_HAPI_MINOR = 28


def _token_transfer(token: int, account: int, at: int, amount: int, payer: int) -> Row:
    return {
        "token_id": token, "account_id": account, "consensus_timestamp": at, "amount": amount,
        "payer_account_id": payer, "is_approval": False,
    }  # fmt: skip


def record_file_name(consensus_start: int) -> str:
    """``2022-07-13T08_46_08.041986003Z.rcd.gz`` for a block starting at that consensus timestamp."""
    seconds, nanos = divmod(consensus_start, SECOND)
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return f"{moment:%Y-%m-%dT%H_%M_%S}.{nanos:09d}Z.rcd.gz"


class _Block:
    """Collects the rows of one block's transactions and the inputs of its record file."""

    def __init__(self, world: World, block: int, activity: contracts.Activity) -> None:
        self.world = world
        self.block = block
        self.activity = activity
        self.logs = 0  # contract log indexes run per record file
        self.rng = world.rng(Tag.BLOCK, block)
        first, creations, slots = world.block_slots(block)
        self.first = first
        self.creations = creations
        self.slots = slots
        self.accounts_before = min(world.accounts, first)  # created in earlier blocks
        self.hashes: list[bytes] = []
        self.gas = 0
        self.timestamps: list[int] = []

    def payer(self) -> int:
        """A live account created in an earlier block, else the treasury (as a num)."""
        account = self.world.pick_account(self.rng, self.accounts_before)
        return TREASURY if account is None else self.world.account_num(account)

    def transaction(
        self,
        at: int,
        kind: int,
        payer: int,
        fee: int,
        transfers: dict[int, int],
        *,
        entity: int | None = None,
        initial_balance: int = 0,
        result: int = SUCCESS,
        memo: bytes | None = None,
    ) -> Emit:
        """The transaction, its hash row and its hbar transfers (the fee split is added here)."""
        rng = self.rng
        node = NODE_ACCOUNTS[rng.randrange(len(NODE_ACCOUNTS))]
        for account, amount in ((payer, -fee), (node, fee // 10), (STAKING_REWARD, fee // 10)):
            transfers[account] = transfers.get(account, 0) + amount
        transfers[FEE_COLLECTOR] = transfers.get(FEE_COLLECTOR, 0) + fee - 2 * (fee // 10)
        tx_hash = self.world.digest("transaction", at, 48)
        payer_id = entity_id(payer)
        yield "transaction", {
            "consensus_timestamp": at, "type": kind, "result": result, "payer_account_id": payer_id,
            "valid_start_ns": at - rng.randrange(SECOND, 8 * SECOND), "valid_duration_seconds": _VALID_DURATION,
            "node_account_id": entity_id(node), "entity_id": None if entity is None else entity_id(entity),
            "initial_balance": initial_balance, "max_fee": max(2 * fee, HBAR), "charged_tx_fee": fee, "memo": memo,
            "transaction_hash": tx_hash, "index": len(self.hashes),
        }  # fmt: skip
        yield "transaction_hash", {
            "consensus_timestamp": at, "hash": tx_hash[:32], "payer_account_id": payer_id,
            "hash_suffix": tx_hash[32:],
        }  # fmt: skip
        for account in sorted(transfers):
            if transfers[account]:
                yield "crypto_transfer", {
                    "entity_id": entity_id(account), "consensus_timestamp": at, "amount": transfers[account],
                    "payer_account_id": payer_id, "is_approval": False,
                }  # fmt: skip
        self.hashes.append(tx_hash)
        self.timestamps.append(at)

    def creation(self, at: int, ordinal: int) -> Emit:
        world, rng = self.world, self.rng
        if ordinal < world.accounts:
            payer = TREASURY if rng.random() < 0.4 else self.payer()
            num = world.account_num(ordinal)
            initial = rng.randrange(1, 500) * HBAR
            fee = 5_000_000 + rng.randrange(1_000_000)
            transfers = {payer: -initial, num: initial}
            yield from self.transaction(
                at, CRYPTO_CREATE, payer, fee, transfers, entity=num, initial_balance=initial
            )
        elif ordinal < world.accounts + world.contracts:
            self.gas += 80_000 + rng.randrange(1_500_000)
            fee = 60 * HBAR + rng.randrange(HBAR)
            num = world.contract_num(ordinal - world.accounts)
            payer = self.payer()
            position = len(self.hashes)
            yield from self.transaction(at, CONTRACT_CREATE, payer, fee, {}, entity=num)
            slot = contracts.Slot(at, payer, self.hashes[-1], position, self.logs)
            rows = list(self.activity.creation(slot, ordinal - world.accounts))
            self.logs += sum(1 for table, _ in rows if table == "contract_log")
            yield from rows
        else:
            facts = token_facts(world, ordinal - world.accounts - world.contracts)
            treasury = world.account_num(facts.treasury)
            fee = 20 * HBAR + rng.randrange(HBAR)
            yield from self.transaction(at, TOKEN_CREATE, treasury, fee, {}, entity=facts.num)
            if facts.initial_supply:
                treasury_id = entity_id(treasury)
                yield (
                    "token_transfer",
                    _token_transfer(facts.id, treasury_id, at, facts.initial_supply, treasury_id),
                )

    def transfer(self, at: int) -> Emit:
        world, rng = self.world, self.rng
        available = self.activity.available(self.first)
        if available and self.activity.is_call(at):
            yield from self.contract_call(at, available)
            return
        payer = self.payer()
        fee = 80_000 + rng.randrange(150_000)
        memo = _MEMOS[rng.randrange(len(_MEMOS))] if rng.random() < 0.15 else None
        if rng.random() < 0.01:
            yield from self.transaction(
                at, CRYPTO_TRANSFER_TYPE, payer, fee, {}, result=INSUFFICIENT_ACCOUNT_BALANCE, memo=memo
            )
            return
        transfers: dict[int, int] = {}
        tokens: list[Row] = []
        user = payer != TREASURY
        if user and rng.random() < 0.2:
            tokens = self._token_transfer(at, payer)
        if not tokens:
            receiver = world.pick_account(rng, self.accounts_before, exclude=payer - world.account_num(0))
            to = NODE_ACCOUNTS[0] if receiver is None else world.account_num(receiver)
            amount = rng.randrange(1, 1_000) * POW10[rng.randrange(4, 9)]
            transfers = {payer: -amount, to: amount}
        reward = self._staking_reward(rng, payer) if user else 0
        if reward:
            transfers[STAKING_REWARD] = transfers.get(STAKING_REWARD, 0) - reward
            transfers[payer] = transfers.get(payer, 0) + reward
        yield from self.transaction(at, CRYPTO_TRANSFER_TYPE, payer, fee, transfers, memo=memo)
        for row in tokens:
            yield "token_transfer", row
        if reward:
            yield "staking_reward_transfer", {
                "account_id": entity_id(payer), "amount": reward, "consensus_timestamp": at,
                "payer_account_id": entity_id(payer),
            }  # fmt: skip

    def contract_call(self, at: int, available: int) -> Emit:
        """A call of a contract created in an earlier block, one in three as an Ethereum transaction."""
        choice = self.world.hash(Tag.CONTRACT_CALL, at) >> 20
        contract, ethereum = evm_code.plain(choice % available), (choice >> 24) % 3 == 0
        payer = self.payer()
        fee = 100_000_000 + self.rng.randrange(HBAR)
        position = len(self.hashes)
        tx_hash = self.world.digest("transaction", at, 48)
        rows, gas = self.activity.call(
            contracts.Slot(at, payer, tx_hash, position, self.logs), contract, ethereum=ethereum
        )
        result = next(row["transaction_result"] for table, row in rows if table == "contract_result")
        kind = contracts.ETHEREUM_TRANSACTION if ethereum else contracts.CONTRACT_CALL
        entity = self.world.contract_num(contract)
        yield from self.transaction(at, kind, payer, fee, {}, entity=entity, result=result)
        self.gas += gas
        self.logs += sum(1 for table, _ in rows if table == "contract_log")
        yield from rows

    def _token_transfer(self, at: int, payer: int) -> list[Row]:
        """Send some of a fungible token the payer held at ``at`` back to the token's treasury."""
        world = self.world
        account = payer - world.account_num(0)
        held = [
            a for a in fungible_associations(world, account)
            if a.associated and a.balance > 0 and a.created < at and a.token.treasury != account
        ]  # fmt: skip
        if not held:
            return []
        chosen = held[self.rng.randrange(len(held))]
        amount = 1 + self.rng.randrange(max(1, chosen.balance // 10))
        payer_id = entity_id(payer)
        treasury_id = entity_id(world.account_num(chosen.token.treasury))
        return [
            _token_transfer(chosen.token.id, payer_id, at, -amount, payer_id),
            _token_transfer(chosen.token.id, treasury_id, at, amount, payer_id),
        ]

    def _staking_reward(self, rng: random.Random, payer: int) -> int:
        account = payer - self.world.account_num(0)
        if self.world.staked_node(account) < 0 or self.world.declines_reward(account) or rng.random() >= 0.1:
            return 0
        return 10_000 + rng.randrange(50_000_000)

    def record_file(self, prev_hash: str) -> tuple[Row, str]:
        running = hashlib.sha384(bytes.fromhex(prev_hash))
        for tx_hash in self.hashes:
            running.update(tx_hash)
        block_hash = running.hexdigest()
        start, end = self.timestamps[0], self.timestamps[-1]
        count = len(self.hashes)
        load_start = end // SECOND + 2 + self.block % 3
        minor = _FIRST_HAPI_MINOR + 4 * self.block // self.world.blocks
        bloom = None
        if self.gas:
            bloom = bytes(
                b & c
                for b, c in zip(
                    self.world.digest("bloom", self.block, 64) * 4,
                    self.world.digest("bloom-mask", self.block, 64) * 4,
                    strict=True,
                )
            )
        return {
            "name": record_file_name(start), "load_start": load_start, "load_end": load_start + 1,
            "hash": block_hash, "prev_hash": prev_hash, "consensus_start": start, "consensus_end": end,
            "count": count, "digest_algorithm": 0, "hapi_version_major": 0, "hapi_version_minor": minor,
            "hapi_version_patch": 0, "version": 6,
            "file_hash": hashlib.sha384(b"file" + bytes.fromhex(block_hash)).hexdigest(), "index": self.block,
            "gas_used": self.gas, "logs_bloom": bloom, "size": 512 + 180 * count + self.rng.randrange(97),
            "sidecar_count": 1 if self.gas else 0, "software_version_major": 0, "software_version_minor": minor,
            "software_version_patch": 0,
        }, block_hash  # fmt: skip


def blocks(world: World) -> Emit:
    """Every block in order, each followed by its ``record_file`` row; then the contracts' current storage."""
    prev_hash = "0" * 96
    activity = contracts.Activity(world)
    for number in range(world.blocks):
        block = _Block(world, number, activity)
        creation_slots = {index * block.slots // block.creations: block.first + index
                          for index in range(block.creations)}  # fmt: skip
        for slot in range(block.slots):
            ordinal = creation_slots.get(slot)
            if ordinal is not None:
                yield from block.creation(world.created(ordinal), ordinal)
            else:
                jitter = block.rng.getrandbits(62)
                yield from block.transfer(world.slot_time(number, slot, block.slots, jitter))
        record, prev_hash = block.record_file(prev_hash)
        yield "record_file", record
    yield from activity.states()
