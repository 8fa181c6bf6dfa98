"""Contract activity inside the blocks: the rows the importer writes for a contract create or call (reference
``importer/handlers/contract_results.py``): ``contract_result`` and its ``contract_transaction_hash``,
``contract_log``, ``contract_state_change`` and ``contract_action`` (the sidecars), ``contract_transaction`` for
every id involved, ``ethereum_transaction`` for calls sent as Ethereum transactions, and at the end
``contract_state``, the latest value of every slot written.

``blocks.py`` asks :meth:`Activity.creation` for each CONTRACTCREATEINSTANCE and, for about
``profile.contract_calls`` of its transfer slots (chosen by hashing the slot's timestamp), emits a CONTRACTCALL or
(one in three) an ETHEREUMTRANSACTION whose rows :meth:`Activity.call` gives. A call runs one of four functions
(ERC-20 ``transfer``, ``approve`` and ``mint``, and ``setValue``), each with its event log; one call in three also
calls a second contract (a log of that contract, a nested action); about one in twenty-five reverts (no logs, no
writes). Values are pure functions of the seed; the only state kept is which slots were written when
(:attr:`Activity.storage`, at most a few slots per contract).

A share of the contracts run compiled Solidity (``evm_code.py``): their creation writes and logs what their
constructor does, and the generated calls go to the other contracts only, so their storage stays consistent with
their bytecode (``POST /api/v1/contracts/call`` can run them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ledgermirror.dataset import evm_code
from ledgermirror.dataset.world import HBAR, Emit, Row, Tag, World, entity_id
from ledgermirror.ledger.evm import BLOOM_BYTES, log_bloom
from ledgermirror.ledger.transaction_codes import SUCCESS, result_number, type_number

CONTRACT_CALL = type_number("CONTRACTCALL")
ETHEREUM_TRANSACTION = type_number("ETHEREUMTRANSACTION")
REVERTED = result_number("CONTRACT_REVERT_EXECUTED")
TRANSFER_EVENT = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
APPROVAL_EVENT = bytes.fromhex("8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925")
VALUE_CHANGED_EVENT = bytes.fromhex("93fe6d397c74fdf1402a8b72e47b68512f0510d7b98a4bc4cbdf6ac7108b3c59")
FUNCTIONS = (  # (selector, event); mint's Transfer comes from the zero address
    (bytes.fromhex("a9059cbb"), TRANSFER_EVENT),
    (bytes.fromhex("095ea7b3"), APPROVAL_EVENT),
    (bytes.fromhex("40c10f19"), TRANSFER_EVENT),
    (bytes.fromhex("55241077"), VALUE_CHANGED_EVENT),
)
SLOTS = 4
"""Storage slots a contract uses (0: read by every call, 1..3: written)."""
CHAIN_ID = bytes.fromhex("012a")  # 298
GAS_LIMIT = 400_000
WEIBARS_PER_TINYBAR = 10_000_000_000
CALL_OPERATION_CALL, CALL_OPERATION_DELEGATECALL, CALL_OPERATION_STATICCALL, CALL_OPERATION_CREATE = 1, 3, 4, 5
CALL, CREATE, PRECOMPILE = 1, 2, 3
OUTPUT, REVERT_REASON = 11, 12
PRECOMPILE_ADDRESS = (0x167).to_bytes(20, "big")


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _address(num: int) -> bytes:
    """The long-zero EVM address of a num."""
    return num.to_bytes(20, "big")


def call_share(world: World) -> int:
    """Calls per million transfer slots: ``contract_calls`` spread over the transfers of the blocks after the
    first contract's creation (calls go to contracts an earlier block created)."""
    if not world.contracts or not world.profile.contract_calls:
        return 0
    first_block = world.creation_slot(world.accounts)[0]
    later = world.transfers * (world.blocks - first_block - 1) // world.blocks
    return min(1_000_000, world.profile.contract_calls * 1_000_000 // max(1, later))


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a contract call's rows go: its timestamp, payer, position in its block and first log index."""

    at: int
    payer: int  # a num
    transaction_hash: bytes  # the 48-byte transaction hash
    transaction_index: int
    log_index: int


@dataclass(slots=True)
class Activity:
    world: World
    storage: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """(contract index, slot) -> (first write, last write)."""
    share: int = -1
    """Calls per million transfer slots (:func:`call_share`)."""
    constructed: dict[int, tuple[int, list[tuple[bytes, bytes]]]] = field(default_factory=dict)
    """Compiled contracts (``evm_code``): contract index -> (creation, its constructor's writes)."""

    def __post_init__(self) -> None:
        self.share = call_share(self.world)

    def is_call(self, at: int) -> bool:
        """Whether the transfer slot at ``at`` carries a contract call instead."""
        return self.share > 0 and self.world.hash(Tag.CONTRACT_CALL, at) % 1_000_000 < self.share

    def value(self, contract: int, slot: int, at: int) -> bytes:
        """The value written to a slot at ``at``, as a sidecar gives it (no leading zero bytes)."""
        return self.world.digest("slot", (contract * SLOTS + slot) * 7919 + at, 32).lstrip(b"\0")

    def _current(self, contract: int, slot: int) -> bytes:
        written = self.storage.get((contract, slot))
        return b"" if written is None else self.value(contract, slot, written[1])

    def _write(self, contract: int, slot: int, at: int) -> tuple[bytes, bytes]:
        """Write a slot: (value read, value written)."""
        read = self._current(contract, slot)
        first = self.storage.get((contract, slot), (at, at))[0]
        self.storage[contract, slot] = (first, at)
        return read, self.value(contract, slot, at)

    def available(self, first_ordinal: int) -> int:
        """The contracts created before the entity of ordinal ``first_ordinal`` (those an earlier block made)."""
        return max(0, min(self.world.contracts, first_ordinal - self.world.accounts))

    def creation(self, slot: Slot, contract: int) -> Emit:
        """The result of a contract's creation: its constructor writes slot 0 (and one in two, slot 1); for a
        compiled contract (:func:`evm_code.kind`), what its constructor really writes and logs, its result the
        compiled runtime. Its logs take the indexes from ``slot.log_index`` on."""
        world = self.world
        rng = world.rng(Tag.CONTRACT_CALL, slot.at)
        num = world.contract_num(contract)
        contract_id, payer = entity_id(num), entity_id(slot.payer)
        gas_used = 80_000 + rng.randrange(1_000_000)
        compiled = evm_code.kind(contract)
        changes: list[tuple[bytes, bytes, bytes]] = []  # (slot without leading zeros, read, written)
        logs: list[tuple[list[bytes], bytes]] = []
        if compiled is None:
            runtime = world.digest("runtime", contract, 64)
            for written in range(1 + rng.randrange(2)):
                read, value = self._write(contract, written, slot.at)
                changes.append((word(written).lstrip(b"\0"), read, value))
        else:
            runtime = evm_code.runtime(compiled)
            done = evm_code.constructed(compiled, num, slot.payer, world.hash(Tag.CONTRACT, contract) >> 24)
            self.constructed[contract] = (slot.at, done.writes)
            changes = [(key.lstrip(b"\0"), b"", value.lstrip(b"\0")) for key, value in done.writes]
            if done.transfer is not None:
                logs.append(done.transfer)
        bloom = 0
        for index, (topics, data) in enumerate(logs):
            log_bloom_bytes = log_bloom(_address(num), topics)
            bloom |= int.from_bytes(log_bloom_bytes, "big")
            stored = [topic.lstrip(b"\0") for topic in topics] + [None] * (4 - len(topics))
            yield "contract_log", {
                "consensus_timestamp": slot.at, "index": slot.log_index + index, "contract_id": contract_id,
                "root_contract_id": contract_id, "bloom": log_bloom_bytes, "data": data, "topic0": stored[0],
                "topic1": stored[1], "topic2": stored[2], "topic3": stored[3], "payer_account_id": payer,
                "transaction_hash": slot.transaction_hash[:32], "transaction_index": slot.transaction_index,
                "synthetic": False,
            }  # fmt: skip
        yield "contract_result", _result(
            slot, contract_id, payer, slot.transaction_hash[:32], SUCCESS,
            amount=0, gas_limit=gas_used + 200_000, gas_used=gas_used, parameters=b"", call_result=runtime,
            bloom=bloom.to_bytes(BLOOM_BYTES, "big") if logs else b"", created=[contract_id],
        )  # fmt: skip
        yield "contract_transaction_hash", _hash_row(slot, contract_id, payer, slot.transaction_hash[:32], SUCCESS)
        for key, read, value in changes:
            yield "contract_state_change", _change(slot, contract_id, payer, key, read=read, written=value)
        yield "contract_action", {
            "consensus_timestamp": slot.at, "index": 0, "call_depth": 0, "call_type": CREATE,
            "call_operation_type": CALL_OPERATION_CREATE, "caller": payer, "caller_type": "ACCOUNT",
            "recipient_contract": contract_id, "gas": gas_used + 200_000, "gas_used": gas_used, "input": b"",
            "value": 0, "result_data": runtime, "result_data_type": OUTPUT, "payer_account_id": payer,
        }  # fmt: skip
        yield from _links(slot, payer, [contract_id, payer])

    def call(self, slot: Slot, contract: int, *, ethereum: bool) -> tuple[list[tuple[str, Row]], int]:
        """The rows of a call of ``contract`` (a plain one, :func:`evm_code.plain`) by the payer, and the gas it
        used. Its logs take the indexes from ``slot.log_index`` on (as many as there are ``contract_log`` rows)."""
        world = self.world
        rng = world.rng(Tag.CONTRACT_CALL, slot.at)
        num = world.contract_num(contract)
        contract_id, payer = entity_id(num), entity_id(slot.payer)
        selector, event = FUNCTIONS[rng.randrange(len(FUNCTIONS))]
        other_num = world.contract_num(evm_code.plain(rng.randrange(world.contracts)))
        amount_word = word(rng.randrange(1, 10**6) * 10 ** rng.randrange(0, 12))
        parameters = selector + word(other_num) + amount_word
        reverted = rng.random() < 0.04
        nested = rng.random() < 1 / 3 and other_num != num
        gas_used = 21_000 + rng.randrange(GAS_LIMIT - 21_000)
        amount = rng.randrange(1, 100) * HBAR // 100 if rng.random() < 0.1 else 0
        result = REVERTED if reverted else SUCCESS
        hash32 = world.digest("ethereum", slot.at, 32) if ethereum else slot.transaction_hash[:32]
        rows: list[tuple[str, Row]] = []
        logs: list[tuple[int, bytes, list[bytes], bytes]] = []  # (contract num, address, topics, data)
        if not reverted:
            sender = b"" if selector == FUNCTIONS[2][0] else _address(slot.payer)
            topics = [event] if event == VALUE_CHANGED_EVENT else [event, sender, _address(other_num)]
            logs.append((num, _address(num), topics, amount_word))
            if nested:
                logs.append((other_num, _address(other_num), [TRANSFER_EVENT, _address(num)], amount_word))
        bloom = 0
        for index, (log_num, address, topics, data) in enumerate(logs):
            log_bloom_bytes = log_bloom(address, topics)
            bloom |= int.from_bytes(log_bloom_bytes, "big")
            stored = [topic.lstrip(b"\0") for topic in topics] + [None] * (4 - len(topics))
            rows.append(("contract_log", {
                "consensus_timestamp": slot.at, "index": slot.log_index + index, "contract_id": entity_id(log_num),
                "root_contract_id": contract_id, "bloom": log_bloom_bytes, "data": data, "topic0": stored[0],
                "topic1": stored[1], "topic2": stored[2], "topic3": stored[3], "payer_account_id": payer,
                "transaction_hash": hash32, "transaction_index": slot.transaction_index, "synthetic": False,
            }))  # fmt: skip
        call_result = b"" if reverted else word(1)
        rows.append(("contract_result", _result(
            slot, contract_id, payer, hash32, result, amount=amount, gas_limit=GAS_LIMIT, gas_used=gas_used,
            parameters=parameters, call_result=call_result, created=[],
            bloom=bloom.to_bytes(BLOOM_BYTES, "big") if logs else b"",
            error_message="0x08c379a0" + word(32).hex() if reverted else "",
        )))  # fmt: skip
        rows.append(("contract_transaction_hash", _hash_row(slot, contract_id, payer, hash32, result)))
        rows.append(
            (
                "contract_state_change",
                _change(slot, contract_id, payer, b"", read=self._current(contract, 0), written=None),
            )
        )
        if not reverted:
            written = 1 + rng.randrange(SLOTS - 1)
            read, value = self._write(contract, written, slot.at)
            key = word(written).lstrip(b"\0")
            rows.append(
                ("contract_state_change", _change(slot, contract_id, payer, key, read=read, written=value))
            )
        rows.append(("contract_action", {
            "consensus_timestamp": slot.at, "index": 0, "call_depth": 0, "call_type": CALL,
            "call_operation_type": CALL_OPERATION_CALL, "caller": payer, "caller_type": "ACCOUNT",
            "recipient_contract": contract_id, "gas": GAS_LIMIT, "gas_used": gas_used, "input": parameters,
            "value": amount, "result_data": word(32) if reverted else call_result,
            "result_data_type": REVERT_REASON if reverted else OUTPUT, "payer_account_id": payer,
        }))  # fmt: skip
        if nested or rng.random() < 0.2:
            precompile = not nested
            rows.append(("contract_action", {
                "consensus_timestamp": slot.at, "index": 1, "call_depth": 1,
                "call_type": PRECOMPILE if precompile else CALL,
                "call_operation_type": CALL_OPERATION_STATICCALL if precompile else CALL_OPERATION_DELEGATECALL,
                "caller": contract_id, "caller_type": "CONTRACT",
                "recipient_contract": None if precompile else entity_id(other_num),
                "recipient_address": PRECOMPILE_ADDRESS if precompile else None,
                "gas": gas_used // 2, "gas_used": gas_used // 4, "input": parameters[:36], "value": 0,
                "result_data": word(1), "result_data_type": OUTPUT, "payer_account_id": payer,
            }))  # fmt: skip
        if ethereum:
            rows.append(
                ("ethereum_transaction", self._ethereum(slot, rng, hash32, num, data=parameters, amount=amount))
            )
        involved = [contract_id, payer] + [entity_id(log[0]) for log in logs]
        rows.extend(_links(slot, payer, list(dict.fromkeys(involved))))
        return rows, gas_used

    def _ethereum(
        self, slot: Slot, rng: random.Random, hash32: bytes, num: int, *, data: bytes, amount: int
    ) -> Row:
        world = self.world
        value = (amount * WEIBARS_PER_TINYBAR).to_bytes(16, "big").lstrip(b"\0")
        return {
            "consensus_timestamp": slot.at, "hash": hash32, "payer_account_id": entity_id(slot.payer),
            "data": b"\x02" + world.digest("ethereum-data", slot.at, 64) + data, "type": 2, "chain_id": CHAIN_ID,
            "nonce": rng.randrange(1_000), "gas_limit": GAS_LIMIT, "max_gas_allowance": 5 * HBAR,
            "max_fee_per_gas": (rng.randrange(100, 1_000) * WEIBARS_PER_TINYBAR).to_bytes(8, "big").lstrip(b"\0"),
            "max_priority_fee_per_gas": (rng.randrange(1, 100) * WEIBARS_PER_TINYBAR).to_bytes(8, "big").lstrip(
                b"\0"
            ),
            "signature_r": world.digest("signature-r", slot.at, 32),
            "signature_s": world.digest("signature-s", slot.at, 32), "recovery_id": rng.randrange(2),
            "to_address": _address(num), "value": value, "call_data": data, "access_list": b"",
        }  # fmt: skip

    def states(self) -> Emit:
        """``contract_state``: every slot written, at its latest value (the compiled contracts' last)."""
        for (contract, slot), (created, modified) in sorted(self.storage.items()):
            yield "contract_state", {
                "contract_id": entity_id(self.world.contract_num(contract)), "slot": word(slot),
                "value": self.value(contract, slot, modified), "created_timestamp": created,
                "modified_timestamp": modified,
            }  # fmt: skip
        for contract, (created, writes) in sorted(self.constructed.items()):
            for key, value in writes:
                yield "contract_state", {
                    "contract_id": entity_id(self.world.contract_num(contract)), "slot": key,
                    "value": value.lstrip(b"\0"), "created_timestamp": created, "modified_timestamp": created,
                }  # fmt: skip


def _result(
    slot: Slot, contract_id: int, payer: int, hash32: bytes, result: int, *, amount: int, gas_limit: int,
    gas_used: int, parameters: bytes, call_result: bytes, bloom: bytes, created: list[int],
    error_message: str = "",
) -> Row:  # fmt: skip
    return {
        "consensus_timestamp": slot.at, "contract_id": contract_id, "payer_account_id": payer, "sender_id": payer,
        "amount": amount, "gas_limit": gas_limit, "gas_used": gas_used, "gas_consumed": gas_used,
        "function_parameters": parameters, "call_result": call_result, "bloom": bloom,
        "created_contract_ids": created, "error_message": error_message, "transaction_hash": hash32,
        "transaction_index": slot.transaction_index, "transaction_nonce": 0, "transaction_result": result,
    }  # fmt: skip


def _hash_row(slot: Slot, contract_id: int, payer: int, hash32: bytes, result: int) -> Row:
    return {
        "consensus_timestamp": slot.at, "entity_id": contract_id, "hash": hash32, "payer_account_id": payer,
        "transaction_result": result,
    }  # fmt: skip


def _change(slot: Slot, contract_id: int, payer: int, key: bytes, *, read: bytes, written: bytes | None) -> Row:
    """A state change; ``key``: the slot without its leading zero bytes."""
    return {
        "consensus_timestamp": slot.at, "contract_id": contract_id, "payer_account_id": payer,
        "slot": key, "value_read": read, "value_written": written, "migration": False,
    }  # fmt: skip


def _links(slot: Slot, payer: int, involved: list[int]) -> Emit:
    for entity in involved:
        yield "contract_transaction", {
            "consensus_timestamp": slot.at, "entity_id": entity, "contract_ids": involved,
            "payer_account_id": payer,
        }  # fmt: skip
