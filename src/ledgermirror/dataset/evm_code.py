"""The compiled contracts a share of the data set's contracts run, and what their constructors leave.

Contracts of index 2 and 3 (mod 4) run real bytecode (``evm_contracts.json``, the ``Erc20`` and ``CallTarget`` of
``tests/contracts/``, kept in sync with their compiled Solidity by ``tests/contracts/simulator_subset.py``), so
``POST /api/v1/contracts/call`` can run them: their ``contract.runtime_bytecode`` is the compiled runtime, their
creation's result is that runtime, and their storage is exactly what the constructor wrote, with the creating
payer as ``msg.sender``:

- ``Erc20("Token <n>", "T<n>", supply)``: name, symbol, total supply, and the whole supply in the creator's
  ``balanceOf`` (and its ``Transfer`` event from the zero address);
- ``CallTarget()``: ``stored = "test"``, ``owner`` the creator, ``values[7] = 49``.

The generated calls (``contracts.py``) never go to these contracts (:func:`plain`), so their storage stays the
constructor's. The other contracts keep pseudo-random bytecode and storage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ledgermirror.ledger.evm import keccak256

_COMPILED: dict[str, Any] = json.loads(
    resources.files("ledgermirror.dataset").joinpath("evm_contracts.json").read_text()
)["contracts"]
ERC20, CALL_TARGET = "Erc20", "CallTarget"
KINDS = {2: ERC20, 3: CALL_TARGET}
"""Contract index mod 4 -> the compiled contract it runs."""
ERC20_BALANCES_SLOT, CALL_TARGET_VALUES_SLOT = 3, 2
"""Storage positions of ``Erc20.balanceOf`` and ``CallTarget.values`` (their declaration order)."""


def kind(contract: int) -> str | None:
    """The compiled contract the contract of this index runs, or None (pseudo-random bytecode)."""
    return KINDS.get(contract % 4)


def plain(contract: int) -> int:
    """The contract a generated call of ``contract`` goes to: itself, or for a compiled one the plain contract two
    indexes before it (created earlier, so it exists whenever this one does)."""
    return contract - 2 if kind(contract) else contract


def runtime(name: str) -> bytes:
    return bytes.fromhex(_COMPILED[name]["runtime"])


def init_code(name: str) -> bytes:
    return bytes.fromhex(_COMPILED[name]["bytecode"])


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def short_string(text: str) -> bytes:
    """A Solidity ``string`` shorter than 32 bytes as its one storage word: the bytes, then length * 2."""
    data = text.encode()
    if len(data) >= 32:
        raise ValueError(f"not a short string: {text!r}")
    return data.ljust(31, b"\0") + bytes((len(data) * 2,))


def mapping_slot(key: bytes, position: int) -> bytes:
    """The storage slot of ``mapping[key]`` for a mapping declared at ``position`` (key a 32-byte word)."""
    return keccak256(key + word(position))


def address_word(num: int) -> bytes:
    """The long-zero EVM address of a num as a 32-byte word."""
    return word(num)


@dataclass(frozen=True, slots=True)
class Constructed:
    """What a compiled contract's constructor did: its storage writes (32-byte slot, value) and, for the ERC-20,
    its one ``Transfer`` event (topics, data)."""

    writes: list[tuple[bytes, bytes]]
    transfer: tuple[list[bytes], bytes] | None


def erc20_name(num: int) -> str:
    return f"Token {num}"


def erc20_symbol(num: int) -> str:
    return f"T{num}"


def erc20_supply(bits: int) -> int:
    """The total supply (8 decimals) from a contract's hash bits."""
    return (1 + bits % 1_000_000) * 10**8


def constructed(name: str, num: int, creator: int, bits: int) -> Constructed:
    """The constructor's work for the contract ``num`` created by the account ``creator``."""
    if name == ERC20:
        supply = erc20_supply(bits)
        writes = [
            (word(0), short_string(erc20_name(num))),
            (word(1), short_string(erc20_symbol(num))),
            (word(2), word(supply)),
            (mapping_slot(address_word(creator), ERC20_BALANCES_SLOT), word(supply)),
        ]
        transfer_event = keccak256(b"Transfer(address,address,uint256)")
        return Constructed(writes, ([transfer_event, word(0), address_word(creator)], word(supply)))
    return Constructed(
        [
            (word(0), short_string("test")),
            (word(3), address_word(creator)),
            (mapping_slot(word(7), CALL_TARGET_VALUES_SLOT), word(49)),
        ],
        None,
    )
