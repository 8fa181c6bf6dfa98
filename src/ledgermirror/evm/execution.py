"""One call executed by py-evm (Cancun rules) over a :class:`~ledgermirror.evm.state.StateReader`.

The call is a transaction of gas price 0 from ``sender`` (its nonce taken from the state, so it always passes),
run by py-evm's transaction executor: intrinsic gas, value transfer, contract creation, refunds (capped at a
fifth, as since London) as Ethereum has them. ``gas_used`` is what the transaction would be charged. Every
write stays in the in-memory state that is dropped afterwards. A ``deadline`` (``time.monotonic``) stops an
execution between operations with :class:`TimeBudgetExceeded`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from eth.constants import BLANK_ROOT_HASH, CREATE_CONTRACT_ADDRESS
from eth.db.atomic import AtomicDB
from eth.exceptions import Revert, VMError
from eth.vm.execution_context import ExecutionContext
from eth.vm.forks.cancun import CancunVM
from eth.vm.forks.cancun.computation import CancunComputation
from eth.vm.forks.cancun.state import CancunState
from eth.vm.spoof import SpoofTransaction
from eth_typing import Address, BlockNumber, Hash32
from eth_utils.exceptions import ValidationError

from ledgermirror.evm import abi
from ledgermirror.evm.account_service import (
    ACCOUNT_SERVICE_ADDRESS,
    HBAR_ALLOWANCE_FACADE,
    account_facade_view,
    account_view,
)
from ledgermirror.evm.exchange_rate import EXCHANGE_RATE_ADDRESS, Unconvertible, exchange_rate_view
from ledgermirror.evm.prng import PRNG_ADDRESS, NoSeed, prng_view
from ledgermirror.evm.state import ReadThroughAccountDB, StateReader
from ledgermirror.evm.system_gas import EXCHANGE_RATE_GAS, PRNG_GAS, VIEW_GAS
from ledgermirror.evm.token_facade import (
    HTS_ADDRESS,
    REDIRECT_FOR_TOKEN,
    NotAnswered,
    Refused,
    TokenState,
    hts_view,
    proxy_code,
    redirected_call,
    token_view,
)
from ledgermirror.evm.token_info import (
    INVALID_TOKEN_ID,
    NFT_INFO_SELECTORS,
    failed_view,
    token_info_view,
)
from ledgermirror.evm.token_info import SELECTORS as INFO_SELECTORS
from ledgermirror.evm.token_overlay import (
    ERC_WRITES,
    HRC_IS_ASSOCIATED,
    HTS_WRITES,
    TokenOverlay,
    erc_write,
    hts_write,
)
from ledgermirror.evm.tracer import Tracer

_CHECK_EVERY = 512
"""Operations between two looks at the clock."""
_UINT64 = 1 << 64
_LONG_ZERO_PREFIX = bytes(12)
_REFUND_QUOTIENT = 5
"""EIP-3529: refunds are capped at a fifth of the gas used."""


class TimeBudgetExceeded(Exception):
    """The execution ran past its deadline."""


class InsufficientBalance(Exception):
    """The sender cannot pay the call's value (possible only with an overridden or a contract's balance: accounts
    are given the minimum balance)."""


@dataclass(frozen=True, slots=True)
class BlockContext:
    number: int
    timestamp: int
    """Seconds."""
    hash: bytes
    """The block's hash (32 bytes): ``BLOCKHASH`` of the block itself, and ``PREVRANDAO``."""
    coinbase: bytes
    chain_id: int


@dataclass(frozen=True, slots=True)
class Call:
    sender: bytes
    to: bytes | None
    """None: a contract creation with ``data`` as init code."""
    data: bytes
    value: int
    gas: int


@dataclass(frozen=True, slots=True)
class Outcome:
    success: bool
    output: bytes
    """The return data; on a revert, the revert data; for a creation, the new contract's runtime bytecode."""
    gas_used: int
    reverted: bool
    """A REVERT (as opposed to another failure: out of gas, an invalid opcode, ...)."""
    error: str
    """The failure's class name (``OutOfGas``, ``InvalidInstruction``, ...), empty on success."""


class InvalidContractId(VMError):
    """Value sent to a precompile or a system contract: the consensus node's ``CustomMessageCallProcessor`` halts
    the frame with ``INVALID_CONTRACT_ID`` (the route answers a call halted so with that code)."""


def _refusing_value(precompile: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(computation: Any) -> Any:
        if computation.msg.value:
            raise InvalidContractId("value sent to a precompile or system contract")
        return precompile(computation)

    return run


class _SystemContracts:
    """py-evm's precompiles, then Hedera's: HTS reads at 0x167, the exchange rate at 0x168, PRNG at 0x169, the
    account service's reads at 0x16a, the ERC facade of every token address and HRC-632's ``hbarAllowance`` on an
    account's address. Value sent to any of them but a token's or an account's address halts the frame
    (:class:`InvalidContractId`)."""

    def __init__(self, standard: Mapping[Any, Any], state: _State, creation: bool = False) -> None:
        self._standard = standard
        self._state = state
        self._creation = creation
        """The frame creates a contract (its address is the new contract's, whose init code must run)."""

    def get(self, address: bytes, default: Any) -> Any:
        found = self._standard.get(address)
        if found is not None:
            return _refusing_value(found)
        if address == HTS_ADDRESS:
            return _refusing_value(self._hts)
        if address == EXCHANGE_RATE_ADDRESS:
            return _refusing_value(self._exchange_rate)
        if address == PRNG_ADDRESS:
            return _refusing_value(self._prng)
        if address == ACCOUNT_SERVICE_ADDRESS:
            return _refusing_value(self._account_service)
        if address[:12] == _LONG_ZERO_PREFIX and self._state.get_code(Address(address)) == proxy_code(address):
            return self._token  # a token's address (only tokens hold the proxy code: no question for others)
        if self._creation or len(address) != 20 or self._state.get_code(Address(address)):
            return default
        if self._state.reader.account_alias(address) is not None:
            return self._account_facade(address)  # an account without code: HRC-632's facade, else nothing runs
        return default

    def _hts(self, computation: Any) -> Any:
        reader = self._state.reader
        data = bytes(computation.msg.data)
        if data[:4] in INFO_SELECTORS:
            static = bool(computation.msg.is_static)
            return _answer(computation, lambda: _token_info(data, reader, static))
        overlay = TokenOverlay(computation.state, reader)
        caller, static = bytes(computation.msg.sender), bool(computation.msg.is_static)
        if data[:4] == REDIRECT_FOR_TOKEN:
            return _answer(computation, lambda: _redirected(data, reader, overlay, caller, static))
        if data[:4] in HTS_WRITES:
            return _answer(computation, lambda: hts_write(_writable(data, static), caller, overlay))
        return _answer(computation, lambda: hts_view(data, reader.token, reader.token_relation, overlay))

    def _exchange_rate(self, computation: Any) -> Any:
        reader = self._state.reader
        data = bytes(computation.msg.data)
        return _answer(computation, lambda: exchange_rate_view(data, reader.exchange_rate()), EXCHANGE_RATE_GAS)

    def _account_facade(self, owner: bytes) -> Callable[[Any], Any]:
        reader = self._state.reader

        def run(computation: Any) -> Any:
            data = bytes(computation.msg.data)
            if data[:4] != HBAR_ALLOWANCE_FACADE:
                return computation  # an account without code runs nothing
            return _answer(computation, lambda: account_facade_view(owner, data, reader))

        return run

    def _account_service(self, computation: Any) -> Any:
        reader, data = self._state.reader, bytes(computation.msg.data)
        return _answer(computation, lambda: account_view(data, reader))

    def _prng(self, computation: Any) -> Any:
        data, block_hash = bytes(computation.msg.data), self._state.block_hash
        return _answer(computation, lambda: _seed(data, block_hash), PRNG_GAS)

    def _token(self, computation: Any) -> Any:
        reader = self._state.reader
        address = bytes(computation.msg.code_address)
        token = reader.token(address)
        assert token is not None
        data = bytes(computation.msg.data)
        overlay = TokenOverlay(computation.state, reader)
        caller, static = bytes(computation.msg.sender), bool(computation.msg.is_static)
        return _answer(computation, lambda: _facade(address, token, data, overlay, caller=caller, static=static))


def _seed(data: bytes, block_hash: bytes) -> bytes:
    """PRNG's answer; a function it does not offer halts (``INVALID_OPERATION`` there), it does not revert."""
    try:
        return prng_view(data, block_hash)
    except NoSeed:
        raise VMError("not a function of the PRNG system contract") from None


def _writable(data: bytes, static: bool) -> bytes:
    """``data`` of a write, refused (a revert) inside a static call."""
    if static:
        raise NotAnswered()
    return data


def _facade(
    address: bytes, token: TokenState, data: bytes, overlay: TokenOverlay, *, caller: bytes, static: bool
) -> bytes:
    """A token's ERC function: a write into the call's overlay, or a view that sees it."""
    if data[:4] == HRC_IS_ASSOCIATED:
        return abi.boolean(overlay.associated(address, caller))
    if data[:4] in ERC_WRITES:
        return erc_write(address, _writable(data, static), caller, overlay)
    return token_view(address, token, data, overlay)


def _redirected(data: bytes, reader: StateReader, overlay: TokenOverlay, caller: bytes, static: bool) -> bytes:
    """``redirectForToken(token, data)`` at 0x167: the token's ERC function of ``data``; an unknown token
    reverts."""
    token_address, inner = redirected_call(data)
    token = reader.token(token_address)
    if token is None:
        raise NotAnswered()
    return _facade(token_address, token, inner, overlay, caller=caller, static=static)


def _token_info(data: bytes, reader: StateReader, static: bool) -> bytes:
    """One of ``evm/token_info``'s reads: its token (and for ``getNonFungibleTokenInfo`` the serial) looked up."""
    target = abi.address_argument(data, 0)
    if target is None:
        raise NotAnswered()
    token = reader.token(target)
    detail = None if token is None else reader.token_detail(target)
    if token is None or detail is None:
        return failed_view(data[:4], INVALID_TOKEN_ID, static)
    nft = None
    if data[:4] in NFT_INFO_SELECTORS:
        serial = abi.word(data, 1)
        if serial is None:
            raise NotAnswered()
        nft = reader.nft(target, serial) if 0 < serial < 1 << 63 else None
    return token_info_view(data, token, detail, nft, static)


def _answer(computation: Any, view: Callable[[], bytes], gas: int = VIEW_GAS) -> Any:
    """A system contract's view run as a precompile, charged ``gas``: empty input halts
    (``CONTRACT_EXECUTION_EXCEPTION``), a function it does not offer reverts with no data."""
    if not computation.msg.data:
        raise VMError("a system contract called without input")
    computation.consume_gas(gas, reason="Hedera system contract view")
    try:
        computation.output = view()
    except Refused as refused:
        computation.output = refused.status.encode()  # py-evm's revert data is the output set before the raise
        raise Revert(computation.output) from None
    except (NotAnswered, Unconvertible):
        raise Revert(b"") from None
    return computation


class _Computation(CancunComputation):
    @property
    def opcodes(self) -> Any:  # type: ignore[override]
        tracer = cast(_State, self.state).tracer
        return CancunComputation.opcodes if tracer is None else tracer.traced(CancunComputation.opcodes)

    @property
    def precompiles(self) -> Any:
        return _SystemContracts(super().precompiles, cast(_State, self.state), bool(self.msg.is_create))

    def consume_gas(self, amount: int, reason: str) -> None:
        state = cast(_State, self.state)
        state.operations += 1
        if state.operations % _CHECK_EVERY == 0 and time.monotonic() > state.deadline:
            raise TimeBudgetExceeded()
        super().consume_gas(amount, reason)


class _State(CancunState):
    account_db_class = ReadThroughAccountDB
    computation_class = _Computation
    deadline: float = float("inf")
    operations: int = 0
    reader: StateReader
    block_hash: bytes = b""
    tracer: Tracer | None = None

    def get_ancestor_hash(self, block_number: int) -> Hash32:
        """Hedera's ``BLOCKHASH`` (upstream-web3.md §2.3): no 256-block window; the block itself has its own hash;
        a later block, a number wider than 8 bytes or an unknown block: zero."""
        current = self.block_number
        if block_number >= _UINT64 or current <= 0 or block_number > current or block_number < 0:
            return Hash32(b"")
        if block_number == current:
            return Hash32(self.block_hash)
        return Hash32(self.reader.block_hash(block_number))

    def set_system_contracts(self) -> None:
        """None: Hedera has no EIP-4788 beacon-roots contract (py-evm's Cancun state would install it)."""


def execute(  # noqa: PLR0917 (the call, where and how it runs)
    call: Call,
    block: BlockContext,
    reader: StateReader,
    deadline: float,
    tracer: Tracer | None = None,
    after: Callable[[Any], None] | None = None,
) -> Outcome:
    """Run ``call`` on a fresh state read through from ``reader`` (each operation through ``tracer`` when given;
    ``after`` is given py-evm's state once the transaction ran); raises :class:`TimeBudgetExceeded`."""
    context = ExecutionContext(
        coinbase=Address(block.coinbase),
        timestamp=block.timestamp,
        block_number=BlockNumber(block.number),
        difficulty=0,
        mix_hash=Hash32(block.hash),
        gas_limit=max(call.gas, 30_000_000),
        prev_hashes=(),
        chain_id=block.chain_id,
        base_fee_per_gas=0,
        excess_blob_gas=0,
    )
    state = _State(AtomicDB(), context, BLANK_ROOT_HASH)
    state.deadline = deadline
    state.operations = 0
    state.reader = reader
    state.block_hash = block.hash
    state.tracer = tracer
    cast(ReadThroughAccountDB, state._account_db).reader = reader
    sender = Address(call.sender)
    unsigned = CancunVM.get_transaction_builder().create_unsigned_transaction(
        nonce=state.get_nonce(sender),
        gas_price=0,
        gas=call.gas,
        to=Address(CREATE_CONTRACT_ADDRESS if call.to is None else call.to),
        value=call.value,
        data=call.data,
    )
    transaction = cast(Any, SpoofTransaction(unsigned, from_=sender))  # a signed transaction's stand-in
    try:
        computation = state.apply_transaction(transaction)
    except ValidationError as refused:
        if "enough balance" not in str(refused):
            raise
        raise InsufficientBalance(str(refused)) from None
    if after is not None:
        after(state)
    remaining = computation.get_gas_remaining()
    spent = call.gas - remaining
    gas_used = spent - min(computation.get_gas_refund(), spent // _REFUND_QUOTIENT)
    if computation.is_success:
        output = bytes(computation.output)
        if call.to is None:
            output = bytes(state.get_code(computation.msg.storage_address))
        return Outcome(True, output, gas_used, False, "")
    error = computation.error
    if isinstance(error, Revert):
        return Outcome(False, bytes(computation.output), gas_used, True, "Revert")
    name = type(error).__name__ if isinstance(error, VMError) else "VMError"
    return Outcome(False, b"", call.gas, False, name)
