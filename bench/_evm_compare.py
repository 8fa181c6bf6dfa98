"""``bench/evm_compare``: pyrevm and py-evm on the same calls, CPU time per call (no database, no HTTP).

The contracts are the test contracts of ``tests/contracts/`` (Solidity source beside the compiled bytecode):

- ``balanceOf``: ``Erc20.balanceOf(holder)`` on a deployed token (two storage reads);
- ``loop``: ``CallTarget.loop(10000)``, 10,000 iterations of an addition (about 1.25 million gas);
- ``create``: a contract creation with ``Erc20``'s init code (constructor writing five slots).

Each call runs on a fresh state holding only the accounts it needs (as a request does: its own overlay). For each
EVM the state is served through the hook it offers for a database behind it: py-evm through an ``AccountDB``
subclass whose reads fall through to a loader (as the mirror's tables would be read), pyrevm through its
``insert_account_info`` / ``insert_account_storage`` (state inserted before the run). Figures are process CPU
seconds (``time.process_time``), the best of ``--rounds`` rounds of ``--calls`` calls, so other work on the machine
disturbs them little. Bounded: at most ``--calls`` x ``--rounds`` calls per case.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ledgermirror.ledger.evm import keccak256

CONTRACTS = Path(__file__).resolve().parent.parent / "tests" / "contracts" / "compiled.json"
CALLER = bytes.fromhex("00" * 19 + "10")
TOKEN = bytes.fromhex("00" * 18 + "03e9")
TARGET = bytes.fromhex("00" * 18 + "03ea")
GAS = 15_000_000


def _selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _address_word(address: bytes) -> bytes:
    return bytes(12) + address


def _compiled() -> dict[str, Any]:
    contracts: dict[str, Any] = json.loads(CONTRACTS.read_text())["contracts"]
    return contracts


def _erc20_init(contracts: dict[str, Any]) -> bytes:
    """``Erc20("Token", "TOK", 10**18)``'s init code: creation bytecode and the ABI-encoded arguments."""
    head = _word(96) + _word(160) + _word(10**18)
    tail = _word(5) + b"Token".ljust(32, b"\0") + _word(3) + b"TOK".ljust(32, b"\0")
    return bytes.fromhex(contracts["Erc20"]["bytecode"]) + head + tail


def _balance_slot(holder: bytes) -> int:
    """``balanceOf[holder]``: the mapping is the contract's fourth slot (name, symbol, totalSupply before it)."""
    return int.from_bytes(keccak256(_address_word(holder) + _word(3)), "big")


class Case:
    def __init__(self, name: str, to: bytes | None, data: bytes, code: bytes, storage: dict[int, int]) -> None:
        self.name = name
        self.to = to
        self.data = data
        self.code = code
        self.storage = storage


def _cases(contracts: dict[str, Any]) -> list[Case]:
    holder = bytes.fromhex("00" * 19 + "20")
    return [
        Case(
            "balanceOf",
            TOKEN,
            _selector("balanceOf(address)") + _address_word(holder),
            bytes.fromhex(contracts["Erc20"]["runtime"]),
            {_balance_slot(holder): 12345},
        ),
        Case(
            "loop",
            TARGET,
            _selector("loop(uint256)") + _word(10_000),
            bytes.fromhex(contracts["CallTarget"]["runtime"]),
            {},
        ),
        Case("create", None, _erc20_init(contracts), b"", {}),
    ]


def _pyrevm_runner(case: Case) -> Callable[[], tuple[bytes, int]]:
    import pyrevm

    caller = "0x" + CALLER.hex()

    def run() -> tuple[bytes, int]:
        evm = pyrevm.EVM(spec_id="CANCUN")
        evm.set_balance(caller, 10**18)
        if case.to is None:
            evm.deploy(caller, case.data, gas=GAS)
            result = evm.result
            assert result is not None
            return b"", result.gas_used
        to = "0x" + case.to.hex()
        evm.insert_account_info(to, pyrevm.AccountInfo(code=case.code))
        for slot, value in case.storage.items():
            evm.insert_account_storage(to, slot, value)
        output = evm.message_call(caller, to, case.data, gas=GAS)
        result = evm.result
        assert result is not None
        return bytes(output), result.gas_used

    return run


def _pyevm_runner(case: Case, reads: list[int]) -> Callable[[], tuple[bytes, int]]:
    from eth.constants import BLANK_ROOT_HASH
    from eth.db.account import AccountDB
    from eth.db.atomic import AtomicDB
    from eth.vm.execution_context import ExecutionContext
    from eth.vm.forks.cancun.state import CancunState
    from eth.vm.message import Message
    from eth_typing import Address, BlockNumber, Hash32

    codes = {} if case.to is None else {case.to: case.code}
    storages = {} if case.to is None else {case.to: case.storage}

    class LoadingAccountDB(AccountDB):
        """Reads an account's code and storage from the loader the first time (the database-backed state)."""

        _loaded: set[bytes]
        _loaded_slots: set[tuple[bytes, int]]

        def get_code(self, address: Address) -> bytes:
            code: bytes = super().get_code(address)
            if not code and address in codes and address not in self._loaded:
                reads[0] += 1
                self._loaded.add(address)
                code = codes[address]
                super().set_code(address, code)
            return code

        def get_storage(self, address: Address, slot: int, from_journal: bool = True) -> int:
            key = (address, slot)
            if key not in self._loaded_slots and address in storages:
                self._loaded_slots.add(key)
                reads[0] += 1
                value = storages[address].get(slot, 0)
                if value:
                    super().set_storage(address, slot, value)
                    return value
            value_now: int = super().get_storage(address, slot, from_journal)
            return value_now

    class LoadingState(CancunState):
        account_db_class = LoadingAccountDB

    def run() -> tuple[bytes, int]:
        context = ExecutionContext(
            coinbase=Address(bytes(20)),
            timestamp=1_700_000_000,
            block_number=BlockNumber(1),
            difficulty=0,
            mix_hash=Hash32(bytes(32)),
            gas_limit=GAS,
            prev_hashes=(),
            chain_id=296,
            base_fee_per_gas=0,
            excess_blob_gas=0,
        )
        state = LoadingState(AtomicDB(), context, BLANK_ROOT_HASH)
        accounts = cast(LoadingAccountDB, state._account_db)
        accounts._loaded = set()
        accounts._loaded_slots = set()
        state.set_balance(Address(CALLER), 10**18)
        tx = state.get_transaction_context_class()(gas_price=0, origin=Address(CALLER))
        if case.to is None:
            created = Address(keccak256(b"create")[:20])
            message = Message(
                gas=GAS,
                to=Address(b""),
                sender=Address(CALLER),
                value=0,
                data=b"",
                code=case.data,
                create_address=created,
            )
            computation = state.computation_class.apply_create_message(state, message, tx)
        else:
            code = state.get_code(Address(case.to))
            message = Message(
                gas=GAS, to=Address(case.to), sender=Address(CALLER), value=0, data=case.data, code=code
            )
            computation = state.computation_class.apply_message(state, message, tx)
        if computation.is_error:
            raise computation.error
        return bytes(computation.output), GAS - computation.get_gas_remaining()

    return run


def _measure(run: Callable[[], tuple[bytes, int]], calls: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            run()
        best = min(best, (time.process_time() - start) / calls)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20, help="calls per round (py-evm's loop: at most 2)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    contracts = _compiled()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'call':<10} {'EVM':<7} {'ms CPU/call':>12} {'gas used':>9}  output")
    for case in _cases(contracts):
        reads = [0]
        for name, run in (("pyrevm", _pyrevm_runner(case)), ("py-evm", _pyevm_runner(case, reads))):
            output, gas = run()
            calls = min(args.calls, 2) if (name == "py-evm" and case.name == "loop") else args.calls
            seconds = _measure(run, calls, args.rounds)
            shown = output[-8:].hex() if output else ""
            print(f"{case.name:<10} {name:<7} {seconds * 1000:>12.3f} {gas:>9}  {shown}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0
