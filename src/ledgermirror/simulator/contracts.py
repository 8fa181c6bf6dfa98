"""Contract generators: create (inline initcode), call, update (memo) and delete (by the creator, who holds
the admin key; the balance goes to an obtainer), with the results, logs and sidecar records
(bytecode, state changes, actions) the network writes for them; :func:`fill_call_result` also serves
Ethereum transactions."""

from __future__ import annotations

from typing import Any

from ledgermirror.ledger.evm import log_bloom
from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.evm import keccak256
from ledgermirror.simulator.hapi import set_timestamp
from ledgermirror.simulator.ledger_state import Contract
from ledgermirror.simulator.picks import HBAR

GAS = 300_000
VALUE_CHANGED = keccak256(b"ValueChanged(uint256)")
"""topic0 of the contract's one event."""


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def create_contract(em: Emitter) -> bool:
    """A contract deployed from inline initcode: its bytecode and first storage writes go to sidecars."""
    payer = picks.payer(em, 500 * HBAR)
    if payer is None or not em.sidecars_allowed:
        return False
    hapi = em.hapi
    runtime = bytes.fromhex("6080604052") + em.rng.randbytes(em.rng.randrange(64, 256))
    initcode = bytes.fromhex("608060405234801561001057600080fd5b50") + runtime
    num = em.ledger.new_num()
    body = hapi.bodies["contract_create"].ContractCreateTransactionBody(
        initcode=initcode,
        gas=GAS,
        memo="simulated contract",
        adminKey=picks.key_message(em, em.ledger.accounts[payer].key),
    )
    body.autoRenewPeriod.seconds = 7_776_000
    record = em.new_record()
    record.receipt.contractID.contractNum = num
    result = record.contractCreateResult
    result.contractID.contractNum = num
    result.gasUsed = em.rng.randrange(50_000, GAS)
    result.gas = GAS
    result.sender_id.accountNum = payer
    result.evm_address.value = num.to_bytes(20, "big")
    result.contractCallResult = runtime
    contract = Contract(num, 0, payer, runtime, initcode)
    slot, value = _word(0), _word(em.rng.randrange(1, 1 << 64))
    contract.storage[slot] = value
    sidecars = _sidecars(em, num, payer, [(slot, b"", value)], bytecode=(initcode, runtime))
    contract.created_timestamp = em.emit(
        Tx(payer, "contractCreateInstance", body, picks.fee(em, "contractCreateInstance"), sidecars=sidecars),
        record,
    )
    em.ledger.contracts[num] = contract
    em.ledger.contract_list.append(contract)
    em.ledger.balances.setdefault(num, 0)
    return True


def call_contract(em: Emitter) -> bool:
    """A call that reads one slot and writes another, with a log; state changes and actions go to sidecars."""
    contract = picks.sample(em, em.ledger.contract_list, lambda c: not c.deleted)
    payer = picks.payer(em, 50 * HBAR)
    if contract is None or payer is None or not em.sidecars_allowed:
        return False
    parameters = bytes.fromhex("6057361d") + _word(em.rng.randrange(1 << 32))
    body = em.hapi.bodies["contract_call"].ContractCallTransactionBody(gas=GAS, functionParameters=parameters)
    body.contractID.contractNum = contract.num
    record = em.new_record()
    record.receipt.contractID.contractNum = contract.num
    sidecars = fill_call_result(
        em, record.contractCallResult, contract, sender=payer, parameters=parameters, gas=GAS
    )
    em.emit(Tx(payer, "contractCall", body, picks.fee(em, "contractCall"), sidecars=sidecars), record)
    return True


def update_or_delete_contract(em: Emitter, delete: bool | None = None) -> bool:
    """The creator changes a contract's memo, or (one time in four, keeping at least two live contracts)
    deletes it: its balance goes to the creator."""
    ledger = em.ledger
    live = [c for c in ledger.contract_list[-20:] if not c.deleted]
    contract = picks.sample(em, live, lambda c: ledger.balance(c.creator) >= 50 * HBAR)
    if contract is None or ledger.accounts[contract.creator].deleted:
        return False
    hapi = em.hapi
    if delete if delete is not None else (em.rng.random() < 0.25 and len(live) > 2):
        body = hapi.bodies["contract_delete"].ContractDeleteTransactionBody(
            transferAccountID=em.account_id(contract.creator)
        )
        body.contractID.contractNum = contract.num
        rest = ledger.balance(contract.num)
        hbar = {contract.num: -rest, contract.creator: rest} if rest else {}
        record = em.new_record()
        record.receipt.contractID.contractNum = contract.num
        em.emit(
            Tx(contract.creator, "contractDeleteInstance", body, picks.fee(em, "contractDelete"), hbar=hbar),
            record,
        )
        contract.deleted, contract.obtainer = True, contract.creator
        return True
    body = hapi.bodies["contract_update"].ContractUpdateTransactionBody()
    body.contractID.contractNum = contract.num
    body.memoWrapper.value = f"simulated contract v{em.rng.randrange(2, 100)}"
    record = em.new_record()
    record.receipt.contractID.contractNum = contract.num
    em.emit(Tx(contract.creator, "contractUpdateInstance", body, picks.fee(em, "contractUpdate")), record)
    contract.memo = body.memoWrapper.value
    return True


def fill_call_result(
    em: Emitter, result: Any, contract: Contract, *, sender: int, parameters: bytes, gas: int
) -> tuple[object, ...]:
    """The result of a call by ``sender`` that reads slot 0 and writes another slot, with one log; applies
    the write to the contract's storage and returns the item's sidecar records."""
    read_slot = _word(0)
    write_slot = _word(em.rng.randrange(1, 8))
    value = _word(em.rng.randrange(1, 1 << 64))
    changes = [
        (read_slot, contract.storage.get(read_slot, b""), None),
        (write_slot, contract.storage.get(write_slot, b""), value),
    ]
    result.contractID.contractNum = contract.num
    result.contractCallResult = value
    result.gasUsed = em.rng.randrange(21_000, gas)
    result.gas = gas
    result.functionParameters = parameters
    result.sender_id.accountNum = sender
    log = result.logInfo.add(data=value)
    log.contractID.contractNum = contract.num
    log.topic.append(VALUE_CHANGED)
    log.bloom = log_bloom(contract.num.to_bytes(20, "big"), [VALUE_CHANGED])
    result.bloom = log.bloom
    contract.storage[write_slot] = value
    contract.calls += 1
    return _sidecars(em, contract.num, sender, changes, call=(parameters, value, result.gasUsed))


def _sidecars(
    em: Emitter,
    contract: int,
    payer: int,
    changes: list[tuple[bytes, bytes, bytes | None]],
    *,
    bytecode: tuple[bytes, bytes] | None = None,
    call: tuple[bytes, bytes, int] | None = None,
) -> tuple[object, ...]:
    """The item's sidecar records; their consensus timestamp is set when the item's time is known."""
    hapi = em.hapi
    records = []
    state = hapi.sidecar.TransactionSidecarRecord()
    change = state.state_changes.contract_state_changes.add()
    change.contract_id.contractNum = contract
    for slot, read, written in changes:
        storage = change.storage_changes.add(slot=slot.lstrip(b"\0"), value_read=read.lstrip(b"\0"))
        if written is not None:
            storage.value_written.value = written.lstrip(b"\0")
    records.append(state)
    if call is not None:
        actions = hapi.sidecar.TransactionSidecarRecord()
        action = actions.actions.contract_actions.add(
            call_type=1, gas=GAS, input=call[0], value=0, gas_used=call[2], output=call[1], call_depth=0
        )
        action.calling_account.accountNum = payer
        action.recipient_contract.contractNum = contract
        action.call_operation_type = 1
        records.append(actions)
    if bytecode is not None:
        code = hapi.sidecar.TransactionSidecarRecord()
        code.bytecode.contract_id.contractNum = contract
        code.bytecode.initcode = bytecode[0]
        code.bytecode.runtime_bytecode = bytecode[1]
        records.append(code)
    for sidecar in records:
        set_timestamp(sidecar.consensus_timestamp, em.peek())
    return tuple(records)
