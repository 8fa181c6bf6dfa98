"""Contracts the EVM runs (the ``evm_contracts`` mix): an ERC-20, an ERC-721 and a contract reading HTS tokens
through the token service (``tests/contracts/*.sol``, their bytecode in ``evm_contracts.json``), deployed and
called by ContractCreate and ContractCall transactions executed by :mod:`.evm_world`. The records and sidecars
(results, gas, logs and blooms, state changes, actions, bytecode) are what the EVM produced; the simulator's
own account of each contract (:class:`~ledgermirror.simulator.ledger_state.EvmToken`, decided before the call)
is what ``truth.json`` lists and what the views must answer. A call the EVM does not carry out as decided
stops the run (the contracts and the simulator disagree)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ledgermirror.ledger.evm import log_bloom
from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ethereum import CHAIN_ID, EIP_1559
from ledgermirror.simulator.evm import RlpItem, keccak256, rlp
from ledgermirror.simulator.evm_world import EvmWorld, Execution, Frame, TokenView, long_zero, num_of, selector
from ledgermirror.simulator.hapi import set_timestamp
from ledgermirror.simulator.ledger_state import TREASURY, Contract, EvmToken, Ledger
from ledgermirror.simulator.picks import HBAR

_TINYBARS_PER_WEIBAR = 10_000_000_000
DEPLOY_GAS = 2_000_000
CALL_GAS = 200_000
_NAMES = ("Lumen", "Quartz", "Meridian", "Solstice", "Tidal")
_CALL, _CREATE, _PRECOMPILE, _SYSTEM = 1, 2, 3, 4
"""``ContractActionType``."""
_OP_CALL, _OP_DELEGATECALL, _OP_STATICCALL, _OP_CREATE = 1, 3, 4, 5
"""``CallOperationType``."""


def compiled() -> dict[str, Any]:
    """Creation and runtime bytecode of the shipped contracts, by name."""
    text = resources.files("ledgermirror.simulator").joinpath("evm_contracts.json").read_text()
    contracts: dict[str, Any] = json.loads(text)["contracts"]
    return contracts


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _string_tail(text: str) -> bytes:
    raw = text.encode()
    return _word(len(raw)) + raw.ljust((len(raw) + 31) // 32 * 32, b"\0")


def encode(*values: int | str) -> bytes:
    """ABI encoding of ``uint256``/``address`` (ints) and ``string`` values."""
    head, tail = b"", b""
    offset = 32 * len(values)
    for value in values:
        if isinstance(value, str):
            head += _word(offset + len(tail))
            tail += _string_tail(value)
        else:
            head += _word(value)
    return head + tail


def world(ledger: Ledger) -> EvmWorld:
    """The ledger's EVM world, created on first use; it answers token reads from the ledger's tokens."""
    if ledger.evm_world is None:

        def token(num: int) -> TokenView | None:
            found = ledger.tokens.get(num)
            if found is None or found.deleted:
                return None
            return TokenView(
                found.name,
                found.symbol,
                found.decimals,
                found.total_supply,
                found.fungible,
                lambda owner: found.balances.get(owner, 0),
            )

        ledger.evm_world = EvmWorld(tokens=token, chain_id=CHAIN_ID)
    return ledger.evm_world


def deploy(em: Emitter, kind: str) -> bool:
    """Deploy an ``Erc20`` (the whole supply to the deployer), an ``Erc721`` (the deployer mints) or a
    ``TokenReader``."""
    creator = picks.payer(em, 500 * HBAR)
    if creator is None or not em.sidecars_allowed:
        return False
    code = compiled()[kind]
    num = em.ledger.new_num()
    name = f"{em.rng.choice(_NAMES)} {num}"
    symbol = f"{name[:3].upper()}{num % 100}"
    token = EvmToken(Contract(num, 0, creator, b""), kind, name, symbol)
    arguments = b""
    if kind == "Erc20":
        token.total_supply = em.rng.randrange(1, 1000) * 10**8 * 1000
        arguments = encode(name, symbol, token.total_supply)
    elif kind == "Erc721":
        arguments = encode(name, symbol)
    initcode = bytes.fromhex(code["bytecode"]) + arguments
    body = em.hapi.bodies["contract_create"].ContractCreateTransactionBody(
        initcode=initcode,
        gas=DEPLOY_GAS,
        memo=f"{kind} {name}",
        adminKey=picks.key_message(em, em.ledger.accounts[creator].key),
    )
    body.autoRenewPeriod.seconds = 7_776_000
    stamp = em.peek()
    execution = world(em.ledger).execute(
        sender=_address(em, creator).to_bytes(20, "big"),
        to=None,
        data=initcode,
        gas=DEPLOY_GAS,
        block_number=em.block_number,
        timestamp=stamp // 1_000_000_000,
        create_at=long_zero(num),
    )
    _expect(execution, kind)
    record = em.new_record()
    record.receipt.contractID.contractNum = num
    result = record.contractCreateResult
    _fill(result, execution, contract=num, sender=creator, gas=DEPLOY_GAS, parameters=b"")
    result.evm_address.value = long_zero(num)
    result.createdContractIDs.add(contractNum=num)
    sidecars = _sidecars(em, execution, creator, bytecode=(num, initcode, execution.output))
    token.contract.runtime_bytecode, token.contract.initcode = execution.output, initcode
    token.contract.memo = body.memo
    token.contract.created_timestamp = em.emit(
        Tx(creator, "contractCreateInstance", body, picks.fee(em, "contractCreateInstance"), sidecars=sidecars),
        record,
    )
    _keep_storage(token.contract, execution)
    if kind == "Erc20":
        token.balances[creator] = token.total_supply
        token.events.append({"timestamp": stamp, "from": None, "to": creator, "amount": token.total_supply})
    em.ledger.contracts[num] = token.contract
    em.ledger.evm_tokens.append(token)
    em.ledger.balances.setdefault(num, 0)
    em.ledger.accounts[creator].pinned = True
    return True


def erc20_transfer(em: Emitter, *, ethereum: bool = False, to_ecdsa: bool = False) -> bool:
    """A holder sends part of its balance to another user (``to_ecdsa``: to an account keyed by an ECDSA key,
    whose alias is its address); with ``ethereum``, a holder keyed by an ECDSA key signs it as an EIP-1559
    transaction that a relay submits (and pays for)."""
    token = _pick(em, "Erc20")
    if token is None:
        return False
    holder = picks.sample(
        em,
        sorted(token.balances),
        lambda a: token.balances[a] > 0 and (_is_ecdsa(em, a) if ethereum else _can_pay(em, a)),
    )
    receiver = picks.other_user(em, holder) if holder is not None else None
    if to_ecdsa:
        chosen = picks.sample(em, em.ledger.ecdsa_accounts, lambda a: not a.deleted and a.num != holder)
        receiver = chosen.num if chosen is not None else None
    if holder is None or receiver is None:
        return False
    amount = (
        em.rng.randrange(1, token.balances[holder] + 1)
        if em.rng.random() < 0.2
        else max(1, token.balances[holder] // em.rng.randrange(2, 20))
    )
    data = selector("transfer(address,uint256)") + encode(_address(em, receiver), amount)
    stamp = _call(em, token, holder, data, expect=_word(1), ethereum=ethereum)
    token.balances[holder] -= amount
    token.balances[receiver] = token.balances.get(receiver, 0) + amount
    token.events.append({"timestamp": stamp, "from": holder, "to": receiver, "amount": amount})
    em.ledger.accounts[receiver].pinned = True
    return True


def erc20_failed_transfer(em: Emitter) -> bool:
    """A holder tries to send more than it holds: the contract reverts (``insufficient balance``), the record
    is CONTRACT_REVERT_EXECUTED with the revert data as its error message, and nothing but the fee moves."""
    token = _pick(em, "Erc20")
    if token is None:
        return False
    holder = picks.sample(em, sorted(token.balances), lambda a: _can_pay(em, a))
    receiver = picks.other_user(em, holder) if holder is not None else None
    if holder is None or receiver is None:
        return False
    amount = token.balances[holder] + em.rng.randrange(1, 1000)
    data = selector("transfer(address,uint256)") + encode(_address(em, receiver), amount)
    _call(em, token, holder, data, expect=None)
    return True


def erc721_mint(em: Emitter) -> bool:
    """The deployer mints the next token id, with its URI, to a user."""
    token = _pick(em, "Erc721", lambda t: _can_pay(em, t.contract.creator))
    receiver = picks.other_user(em) if token is not None else None
    if token is None or receiver is None:
        return False
    token_id = token.next_id
    uri = f"ipfs://simulated/{token.contract.num}/{token_id}"
    data = selector("mint(address,uint256,string)") + encode(_address(em, receiver), token_id, uri)
    stamp = _call(em, token, token.contract.creator, data, expect=b"")
    token.next_id += 1
    token.owners[token_id], token.uris[token_id] = receiver, uri
    token.balances[receiver] = token.balances.get(receiver, 0) + 1
    token.total_supply += 1
    token.events.append({"timestamp": stamp, "from": None, "to": receiver, "token_id": token_id})
    em.ledger.accounts[receiver].pinned = True
    return True


def erc721_approve(em: Emitter) -> bool:
    """An owner approves another user to move one of its tokens."""
    token = _pick(em, "Erc721", lambda t: bool(t.owners))
    if token is None:
        return False
    token_id = picks.sample(em, sorted(token.owners), lambda i: _can_pay(em, token.owners[i]))
    spender = picks.other_user(em, token.owners[token_id]) if token_id is not None else None
    if token_id is None or spender is None:
        return False
    data = selector("approve(address,uint256)") + encode(_address(em, spender), token_id)
    stamp = _call(em, token, token.owners[token_id], data, expect=b"")
    token.approved[token_id] = spender
    token.events.append({"timestamp": stamp, "token_id": token_id, "approved": spender})
    em.ledger.accounts[spender].pinned = True
    return True


def erc721_transfer(em: Emitter) -> bool:
    """An owner, or the account it approved (half the time when there is one), moves a token to another
    user."""
    token = _pick(em, "Erc721", lambda t: bool(t.owners))
    if token is None:
        return False
    token_id = picks.sample(em, sorted(token.owners), lambda i: _can_pay(em, token.owners[i]))
    if token_id is None:
        return False
    owner = token.owners[token_id]
    sender = owner
    spender = token.approved.get(token_id)
    if spender is not None and _can_pay(em, spender) and em.rng.random() < 0.5:
        sender = spender
    receiver = picks.other_user(em, owner, sender)
    if receiver is None:
        return False
    data = selector("transferFrom(address,address,uint256)") + encode(
        _address(em, owner), _address(em, receiver), token_id
    )
    stamp = _call(em, token, sender, data, expect=b"")
    token.approved.pop(token_id, None)
    token.owners[token_id] = receiver
    token.balances[owner] -= 1
    token.balances[receiver] = token.balances.get(receiver, 0) + 1
    token.events.append({"timestamp": stamp, "from": owner, "to": receiver, "token_id": token_id})
    em.ledger.accounts[receiver].pinned = True
    return True


def read_token(em: Emitter) -> bool:
    """A user asks the token reader for a holder's balance of an HTS fungible token (a call of the token's
    address, answered by the token service)."""
    reader = _pick(em, "TokenReader")
    hts = picks.sample(em, em.ledger.fungible, lambda t: not t.deleted and bool(t.balances))
    payer = picks.payer(em, 50 * HBAR)
    if reader is None or hts is None or payer is None:
        return False
    owner = em.rng.choice(sorted(hts.balances))
    balance = hts.balances[owner]
    data = selector("balanceIn(address,address)") + encode(hts.num, owner)
    stamp = _call(em, reader, payer, data, expect=_word(balance))
    reader.events.append({"timestamp": stamp, "token": hts.num, "owner": owner, "balance": balance})
    return True


def _address(em: Emitter, num: int) -> int:
    """The EVM address contracts see for an account (as an integer): its ECDSA alias, else its long-zero
    address."""
    account = em.ledger.accounts.get(num)
    address = account.evm_address if account is not None and account.evm_address else long_zero(num)
    return int.from_bytes(address, "big")


def _is_ecdsa(em: Emitter, num: int) -> bool:
    account = em.ledger.accounts.get(num)
    return account is not None and not account.deleted and bool(account.evm_address)


def _pick(em: Emitter, kind: str, accept: Any = lambda _: True) -> EvmToken | None:
    return picks.sample(
        em, em.ledger.evm_tokens, lambda t: t.kind == kind and not t.contract.deleted and accept(t)
    )


def _can_pay(em: Emitter, num: int) -> bool:
    account = em.ledger.accounts.get(num)
    return account is not None and not account.deleted and em.ledger.balance(num) >= 50 * HBAR


def _call(
    em: Emitter, token: EvmToken, sender: int, data: bytes, *, expect: bytes | None, ethereum: bool = False
) -> int:
    """A ContractCall of ``token``'s contract by ``sender`` returning ``expect`` (None: it must revert), or
    (``ethereum``) the same call as an Ethereum transaction a relay submits; returns its consensus timestamp."""
    num = token.contract.num
    stamp = em.peek()
    execution = world(em.ledger).execute(
        sender=_address(em, sender).to_bytes(20, "big"),
        to=long_zero(num),
        data=data,
        gas=CALL_GAS,
        block_number=em.block_number,
        timestamp=stamp // 1_000_000_000,
    )
    if expect is None:
        if not execution.reverted:
            raise AssertionError(f"a {token.kind} call the simulator meant to fail did not revert: {execution}")
    else:
        _expect(execution, token.kind, expect)
    record = em.new_record()
    record.receipt.contractID.contractNum = num
    _fill(record.contractCallResult, execution, contract=num, sender=sender, gas=CALL_GAS, parameters=data)
    sidecars = _sidecars(em, execution, sender)
    status = "SUCCESS" if execution.success else "CONTRACT_REVERT_EXECUTED"
    if ethereum:
        emitted = _ethereum(em, num, sender, data, record, status, sidecars)
    else:
        body = em.hapi.bodies["contract_call"].ContractCallTransactionBody(gas=CALL_GAS, functionParameters=data)
        body.contractID.contractNum = num
        fee = picks.fee(em, "contractCall")
        emitted = em.emit(Tx(sender, "contractCall", body, fee, status=status, sidecars=sidecars), record)
    _keep_storage(token.contract, execution)
    token.contract.calls += 1
    return emitted


def _ethereum(  # noqa: PLR0917
    em: Emitter, contract: int, sender: int, data: bytes, record: Any, status: str, sidecars: tuple[object, ...]
) -> int:
    """The call as an EIP-1559 transaction of ``sender`` (its next nonce), submitted and paid for by a relay;
    ``r``/``s`` are random bytes, as in :mod:`.ethereum`."""
    account = em.ledger.accounts[sender]
    relay = picks.payer(em, 100 * HBAR, exclude=(sender,)) or TREASURY
    fields: list[RlpItem] = [
        CHAIN_ID,
        account.ethereum_nonce,
        em.rng.randrange(1, 100) * _TINYBARS_PER_WEIBAR,
        em.rng.randrange(100, 1000) * _TINYBARS_PER_WEIBAR,
        CALL_GAS,
        long_zero(contract),
        0,
        data,
        [],
        em.rng.randrange(2),
        em.rng.randbytes(32),
        em.rng.randbytes(32),
    ]
    ethereum_data = bytes((EIP_1559,)) + rlp(fields)
    body = em.hapi.bodies["ethereum_transaction"].EthereumTransactionBody(
        ethereum_data=ethereum_data, max_gas_allowance=5 * HBAR
    )
    record.ethereum_hash = keccak256(ethereum_data)
    record.contractCallResult.signer_nonce.value = account.ethereum_nonce + 1
    fee = picks.fee(em, "ethereumTransaction")
    emitted = em.emit(Tx(relay, "ethereumTransaction", body, fee, status=status, sidecars=sidecars), record)
    account.ethereum_nonce += 1
    return emitted


def _expect(execution: Execution, kind: str, output: bytes | None = None) -> None:
    if not execution.success or (output is not None and execution.output != output):
        raise AssertionError(f"the EVM ran a {kind} call otherwise than the simulator decided: {execution}")


def _keep_storage(contract: Contract, execution: Execution) -> None:
    """The contract's storage as the EVM left it (what ``truth.json`` lists)."""
    for access in execution.storage.get(long_zero(contract.num), []):
        if access.written is not None:
            if any(access.written):
                contract.storage[access.slot] = access.written
            else:
                contract.storage.pop(access.slot, None)


def _fill(result: Any, execution: Execution, *, contract: int, sender: int, gas: int, parameters: bytes) -> None:
    """A ``ContractFunctionResult`` as the EVM produced it: output or error message, gas, logs and bloom."""
    result.contractID.contractNum = contract
    if execution.success:
        result.contractCallResult = execution.output
    else:  # the network's text of a failure: the revert data in hex, else the error's name
        result.errorMessage = "0x" + execution.output.hex() if execution.reverted else execution.error
    result.gasUsed = execution.gas_used
    result.gas = gas
    result.functionParameters = parameters
    result.sender_id.accountNum = sender
    bloom = 0
    for address, topics, data in execution.logs:
        log = result.logInfo.add(data=data)
        log.contractID.contractNum = num_of(address) or 0
        log.topic.extend(topics)
        log.bloom = log_bloom(address, list(topics))
        bloom |= int.from_bytes(log.bloom, "big")
    if execution.logs:
        result.bloom = bloom.to_bytes(256, "big")


def _stripped(word: bytes) -> bytes:
    return word.lstrip(b"\0")


def _sidecars(
    em: Emitter, execution: Execution, payer: int, *, bytecode: tuple[int, bytes, bytes] | None = None
) -> tuple[object, ...]:
    """State changes, actions and (for a creation) bytecode, as the EVM produced them."""
    hapi = em.hapi
    records = []
    if execution.storage:
        records.append(_state_changes(hapi, execution))
    actions = hapi.sidecar.TransactionSidecarRecord()
    for frame in execution.frames:
        _action(actions.actions.contract_actions.add(), frame, payer)
    records.append(actions)
    if bytecode is not None:
        code = hapi.sidecar.TransactionSidecarRecord()
        code.bytecode.contract_id.contractNum = bytecode[0]
        code.bytecode.initcode = bytecode[1]
        code.bytecode.runtime_bytecode = bytecode[2]
        records.append(code)
    for sidecar in records:
        set_timestamp(sidecar.consensus_timestamp, em.peek())
    return tuple(records)


def _state_changes(hapi: Any, execution: Execution) -> Any:
    """Every slot read or written, per contract (slots and values without leading zeros, as the network)."""
    state = hapi.sidecar.TransactionSidecarRecord()
    for address, accesses in execution.storage.items():
        change = state.state_changes.contract_state_changes.add()
        change.contract_id.contractNum = num_of(address) or 0
        for access in accesses:
            storage = change.storage_changes.add(slot=_stripped(access.slot), value_read=_stripped(access.read))
            if access.written is not None:
                storage.value_written.value = _stripped(access.written)
    return state


def _action(action: Any, frame: Frame, payer: int) -> None:
    """One frame as a ``ContractAction``."""
    if frame.system:
        action.call_type = _SYSTEM
    elif frame.precompile:
        action.call_type = _PRECOMPILE
    else:
        action.call_type = _CREATE if frame.create else _CALL
    action.gas, action.input, action.value = frame.gas, frame.input, frame.value
    action.gas_used, action.call_depth = frame.gas_used, frame.depth
    if frame.create:
        action.call_operation_type = _OP_CREATE
    elif frame.delegate:
        action.call_operation_type = _OP_DELEGATECALL
    else:
        action.call_operation_type = _OP_STATICCALL if frame.static else _OP_CALL
    if frame.depth == 0:
        action.calling_account.accountNum = payer
    else:
        action.calling_contract.contractNum = num_of(frame.sender) or 0
    action.recipient_contract.contractNum = num_of(frame.to) or 0
    if frame.success:
        action.output = frame.output
    elif frame.reverted:
        action.revert_reason = frame.output
    else:
        action.error = frame.error.encode()
