"""The simulator's EVM world: one py-evm (Cancun) state of the contracts the simulated network runs, kept in
memory across the whole run, and :meth:`EvmWorld.execute`, which runs one transaction on it and reports what
the network's records and sidecars carry: success, output, gas used, logs, the storage slots read and written
per contract, and the call tree (the frames' senders, targets, gas and results).

Hedera's addressing: a contract created by a HAPI transaction lives at its entity's long-zero address (not the
sender-and-nonce address of Ethereum), so a creation names its address. Hedera's token service is answered as
far as a contract reading a token needs it: the ERC views of a token's address (``name``, ``symbol``,
``decimals``, ``totalSupply``, ``balanceOf``) and ``isToken``/``getTokenType`` at 0x167, from the simulator's
own token state through :class:`TokenLookup`. Gas price 0, no block gas limit beyond the call's gas: the
sender needs no balance. Everything is deterministic (no clock, no randomness).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from eth.constants import BLANK_ROOT_HASH, CREATE_CONTRACT_ADDRESS
from eth.db.atomic import AtomicDB
from eth.exceptions import Revert, VMError
from eth.vm.execution_context import ExecutionContext
from eth.vm.forks.cancun import CancunVM
from eth.vm.forks.cancun.computation import CancunComputation
from eth.vm.forks.cancun.state import CancunState, CancunTransactionExecutor
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address, BlockNumber, Hash32

from ledgermirror.evm.system_gas import VIEW_GAS
from ledgermirror.ledger.evm import keccak256

HTS_ADDRESS = (0x167).to_bytes(20, "big")
"""Hedera's token service system contract."""
SYSTEM_VIEW_GAS = VIEW_GAS
"""Gas a token view of the simulated token service costs: the consensus node's, as ``contracts/call`` charges."""
_LONG_ZERO_PREFIX = bytes(12)
_PRECOMPILES = 10
"""Ethereum's precompiles at 0x01..0x0a."""
_REFUND_QUOTIENT = 5
"""EIP-3529: refunds are capped at a fifth of the gas used."""
SUCCESS_CODE = 22
"""``ResponseCodeEnum.SUCCESS``, the response code of a token service answer."""


def long_zero(num: int) -> bytes:
    """The 20-byte long-zero EVM address of entity ``0.0.num``."""
    return num.to_bytes(20, "big")


def num_of(address: bytes) -> int | None:
    """The entity number of a long-zero address, or None for any other address."""
    return int.from_bytes(address[12:], "big") if address[:12] == _LONG_ZERO_PREFIX else None


def selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


@dataclass(frozen=True, slots=True)
class TokenView:
    """What a contract may read of an HTS token."""

    name: str
    symbol: str
    decimals: int
    total_supply: int
    fungible: bool
    balance_of: Callable[[int], int]
    """The balance of an account number (0 without a relationship)."""


class TokenLookup(Protocol):
    def __call__(self, num: int) -> TokenView | None:
        """The live token ``0.0.num``, or None."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of an execution's call tree, in the order frames started (depth 0 first)."""

    depth: int
    sender: bytes
    to: bytes
    """The frame's target: the created address for a creation, the code's address for a call."""
    create: bool
    static: bool
    delegate: bool
    system: bool
    """A call of the token service (0x167 or a token's address)."""
    precompile: bool
    """A call of one of Ethereum's precompiles."""
    gas: int
    gas_used: int
    value: int
    input: bytes
    output: bytes
    """Return data; the revert data of a reverted frame."""
    success: bool
    reverted: bool
    error: str


@dataclass(frozen=True, slots=True)
class SlotAccess:
    slot: bytes
    """32 bytes."""
    read: bytes
    """The value before the transaction (32 bytes)."""
    written: bytes | None
    """The value after it when the transaction changed it (32 bytes), else None."""


@dataclass(frozen=True, slots=True)
class Execution:
    success: bool
    output: bytes
    """Return data; on a revert the revert data; for a creation the new contract's runtime bytecode."""
    gas_used: int
    reverted: bool
    error: str
    logs: tuple[tuple[bytes, tuple[bytes, ...], bytes], ...]
    """(address, 32-byte topics, data) in order."""
    storage: dict[bytes, list[SlotAccess]]
    """Contract address → the slots the transaction read or wrote, in first-access order."""
    frames: tuple[Frame, ...]


class _SystemContracts:
    """py-evm's precompiles, then the simulated token service: 0x167 and the ERC views of token addresses."""

    def __init__(self, standard: Any, tokens: TokenLookup) -> None:
        self._standard = standard
        self._tokens = tokens

    def get(self, address: bytes, default: Any) -> Any:
        found = self._standard.get(address)
        if found is not None:
            return found
        if address == HTS_ADDRESS:
            return self._hts
        num = num_of(address)
        if num is not None and self._tokens(num) is not None:
            return self._token
        return default

    def __contains__(self, address: object) -> bool:
        return self.get(cast(bytes, address), None) is not None

    def _hts(self, computation: Any) -> Any:
        data = bytes(computation.msg.data)
        computation.consume_gas(SYSTEM_VIEW_GAS, reason="token service view")
        if data[:4] == selector("isToken(address)") and len(data) >= 36:
            found = self._lookup(data[4:36]) is not None
            computation.output = _word(SUCCESS_CODE) + _word(int(found))
            return computation
        if data[:4] == selector("getTokenType(address)") and len(data) >= 36:
            token = self._lookup(data[4:36])
            if token is not None:
                computation.output = _word(SUCCESS_CODE) + _word(0 if token.fungible else 1)
                return computation
        raise Revert(b"")

    def _lookup(self, word: bytes) -> TokenView | None:
        num = num_of(word[12:])
        return self._tokens(num) if num is not None and word[:12] == bytes(12) else None

    def _token(self, computation: Any) -> Any:
        token = self._tokens(cast(int, num_of(bytes(computation.msg.code_address))))
        assert token is not None
        data = bytes(computation.msg.data)
        computation.consume_gas(SYSTEM_VIEW_GAS, reason="token view")
        fixed = {
            selector("name()"): lambda: _string(token.name),
            selector("symbol()"): lambda: _string(token.symbol),
            selector("totalSupply()"): lambda: _word(token.total_supply),
        }
        if token.fungible:
            fixed[selector("decimals()")] = lambda: _word(token.decimals)
        answer = fixed.get(data[:4])
        if answer is not None:
            computation.output = answer()
            return computation
        if data[:4] == selector("balanceOf(address)") and len(data) >= 36:
            owner = num_of(data[16:36])
            computation.output = _word(token.balance_of(owner) if owner is not None else 0)
            return computation
        raise Revert(b"")


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _string(text: str) -> bytes:
    raw = text.encode()
    return _word(32) + _word(len(raw)) + raw.ljust((len(raw) + 31) // 32 * 32, b"\0")


class _Computation(CancunComputation):
    tokens: TokenLookup

    @property
    def precompiles(self) -> Any:
        return _SystemContracts(super().precompiles, cast(_State, self.state).tokens)


class _Executor(CancunTransactionExecutor):
    def build_evm_message(self, transaction: Any) -> Any:
        message = super().build_evm_message(transaction)
        create_at = cast(_State, self.vm_state).create_at
        if message.is_create and create_at is not None:
            cast(Any, message).storage_address = Address(create_at)
        return message


class _State(CancunState):
    computation_class = _Computation
    transaction_executor_class = _Executor
    create_at: bytes | None = None
    tokens: TokenLookup
    accessed: dict[tuple[bytes, int], int]

    def get_storage(self, address: Address, slot: int, from_journal: bool = True) -> int:
        key = (bytes(address), slot)
        if key not in self.accessed:
            self.accessed[key] = super().get_storage(address, slot, from_journal=False)
        return super().get_storage(address, slot, from_journal)

    def set_storage(self, address: Address, slot: int, value: int) -> None:
        self.get_storage(address, slot)
        super().set_storage(address, slot, value)

    def set_system_contracts(self) -> None:
        """None: Hedera has no EIP-4788 beacon-roots contract."""


@dataclass(slots=True)
class EvmWorld:
    """The simulated network's EVM state (accounts, code, storage), persisted between transactions."""

    tokens: TokenLookup
    chain_id: int
    _db: AtomicDB = field(default_factory=AtomicDB)
    _root: Hash32 = BLANK_ROOT_HASH

    def execute(
        self,
        *,
        sender: bytes,
        to: bytes | None,
        data: bytes,
        gas: int,
        block_number: int,
        timestamp: int,
        create_at: bytes | None = None,
    ) -> Execution:
        """Run one transaction (a call of ``to``, or a creation at ``create_at`` with ``data`` as initcode) and
        keep what it changed. ``timestamp`` is in seconds."""
        context = ExecutionContext(
            coinbase=Address(long_zero(98)),
            timestamp=timestamp,
            block_number=BlockNumber(block_number),
            difficulty=0,
            mix_hash=Hash32(bytes(32)),
            gas_limit=max(gas, 30_000_000),
            prev_hashes=(),
            chain_id=self.chain_id,
            base_fee_per_gas=0,
            excess_blob_gas=0,
        )
        state = _State(self._db, context, self._root)
        state.create_at = create_at
        state.tokens = self.tokens
        state.accessed = {}
        unsigned = CancunVM.get_transaction_builder().create_unsigned_transaction(
            nonce=state.get_nonce(Address(sender)),
            gas_price=0,
            gas=gas,
            to=Address(CREATE_CONTRACT_ADDRESS if to is None else to),
            value=0,
            data=data,
        )
        computation = state.apply_transaction(cast(Any, SpoofTransaction(unsigned, from_=Address(sender))))
        storage = _storage(state)
        state.persist()
        self._root = state.state_root
        spent = gas - computation.get_gas_remaining()
        gas_used = spent - min(computation.get_gas_refund(), spent // _REFUND_QUOTIENT)
        frames = tuple(_frames(computation, 0, self.tokens))
        if computation.is_success:
            output = bytes(computation.output)
            if to is None:
                output = bytes(state.get_code(computation.msg.storage_address))
            logs = tuple(
                (bytes(address), tuple(_word(topic) for topic in topics), bytes(log_data))
                for address, topics, log_data in computation.get_log_entries()
            )
            return Execution(True, output, gas_used, False, "", logs, storage, frames)
        error = computation.error
        reverted = isinstance(error, Revert)
        name = type(error).__name__ if isinstance(error, VMError) else "VMError"
        output = bytes(computation.output) if reverted else b""
        return Execution(False, output, gas_used if reverted else gas, reverted, name, (), storage, frames)

    def storage_at(self, address: bytes, slot: int) -> int:
        """The value of a slot now (for checks)."""
        state = _State(self._db, _idle_context(self.chain_id), self._root)
        state.accessed = {}
        return int(state.get_storage(Address(address), slot))


def _idle_context(chain_id: int) -> ExecutionContext:
    return ExecutionContext(
        coinbase=Address(bytes(20)),
        timestamp=0,
        block_number=BlockNumber(0),
        difficulty=0,
        mix_hash=Hash32(bytes(32)),
        gas_limit=30_000_000,
        prev_hashes=(),
        chain_id=chain_id,
        base_fee_per_gas=0,
        excess_blob_gas=0,
    )


def _storage(state: _State) -> dict[bytes, list[SlotAccess]]:
    found: dict[bytes, list[SlotAccess]] = {}
    for (address, slot), before in state.accessed.items():
        after = state.get_storage(Address(address), slot)
        written = _word(after) if after != before else None
        found.setdefault(address, []).append(SlotAccess(_word(slot), _word(before), written))
    return found


def _frames(computation: Any, depth: int, tokens: TokenLookup) -> list[Frame]:
    message = computation.msg
    target = bytes(message.storage_address if message.is_create else message.code_address)
    num = num_of(target)
    system = not message.is_create and (
        target == HTS_ADDRESS or (num is not None and num > _PRECOMPILES and tokens(num) is not None)
    )
    precompile = not message.is_create and num is not None and 0 < num <= _PRECOMPILES
    reverted = isinstance(computation.error, Revert) if not computation.is_success else False
    gas_used = message.gas - computation.get_gas_remaining() if computation.is_success or reverted else message.gas
    output = bytes(computation.output) if computation.is_success or reverted else b""
    frame = Frame(
        depth=depth,
        sender=bytes(message.sender),
        to=target,
        create=bool(message.is_create),
        static=bool(message.is_static),
        delegate=bytes(message.storage_address) != bytes(message.code_address) and not message.is_create,
        system=system,
        precompile=precompile,
        gas=message.gas,
        gas_used=gas_used,
        value=message.value,
        input=bytes(message.data) if not message.is_create else bytes(message.code),
        output=output,
        success=bool(computation.is_success),
        reverted=reverted,
        error="" if computation.is_success else type(computation.error).__name__,
    )
    frames = [frame]
    for child in computation.children:
        frames += _frames(child, depth + 1, tokens)
    return frames
