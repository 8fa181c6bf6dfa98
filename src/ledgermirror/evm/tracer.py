"""An opcode trace of one execution, in the shape of the reference's ``/opcodes`` answer (upstream-web3.md §4.4):
one entry per executed operation of every frame, with the frame's depth, pc, operation name, gas left after it
and its cost, and on request the stack (bottom first), the memory (32-byte words) and the storage slots accessed
so far in the whole transaction (first access wins, a write replaces the value)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SLOAD = 0x54
SSTORE = 0x55
REVERT = 0xFD
MAX_ENTRIES = 1_000_000
"""Operations traced at most; a longer execution stops with :class:`TraceTooLong`."""


class TraceTooLong(Exception):
    """The execution ran more operations than a trace may hold."""


@dataclass(frozen=True, slots=True)
class TraceOptions:
    stack: bool = True
    memory: bool = False
    storage: bool = False


def _word(value: int | bytes) -> str:
    if isinstance(value, bytes):
        return "0x" + value.rjust(32, b"\0").hex()
    return "0x" + format(value % (1 << 256), "064x")


@dataclass(slots=True)
class Tracer:
    options: TraceOptions
    entries: list[dict[str, Any]] = field(default_factory=list)
    storage: dict[str, str] = field(default_factory=dict)

    def traced(self, opcodes: Mapping[int, Any]) -> _TracedOpcodes:
        return _TracedOpcodes(opcodes, self)

    def run(self, opcode: int, function: Callable[..., Any], computation: Any) -> Any:
        if len(self.entries) >= MAX_ENTRIES:
            raise TraceTooLong()
        stack = list(computation._stack.values)
        entry: dict[str, Any] = {
            "depth": computation.msg.depth,
            "gas": 0,
            "gas_cost": 0,
            "memory": [],
            "op": getattr(function, "mnemonic", f"0x{opcode:02x}"),
            "pc": max(computation.code.program_counter - 1, 0),
            "reason": None,
            "stack": [_word(value) for value in stack] if self.options.stack else [],
            "storage": {},
        }
        if self.options.memory:
            memory = bytes(computation._memory._bytes)
            entry["memory"] = [_word(memory[start : start + 32]) for start in range(0, len(memory), 32)]
        before = computation.get_gas_remaining()
        self.entries.append(entry)
        try:
            return function(computation=computation)
        finally:
            entry["gas"] = computation.get_gas_remaining()
            entry["gas_cost"] = before - entry["gas"]
            self._storage(opcode, stack, computation, entry)

    def _storage(self, opcode: int, stack: list[Any], computation: Any, entry: dict[str, Any]) -> None:
        if opcode == SLOAD and stack:
            key = _word(stack[-1])
            after = computation._stack.values
            if key not in self.storage and after:
                self.storage[key] = _word(after[-1])
        elif opcode == SSTORE and len(stack) >= 2:
            self.storage[_word(stack[-1])] = _word(stack[-2])
        elif opcode == REVERT and len(stack) >= 2:
            start, size = _int(stack[-1]), _int(stack[-2])
            data = bytes(computation._memory._bytes[start : start + size])
            entry["reason"] = "0x" + data.hex()
        if self.options.storage:
            entry["storage"] = {key: self.storage[key] for key in sorted(self.storage)}


def _int(value: int | bytes) -> int:
    return value if isinstance(value, int) else int.from_bytes(value, "big")


class _TracedOpcodes:
    """py-evm's opcode table, each operation run through the tracer."""

    def __init__(self, opcodes: Mapping[int, Any], tracer: Tracer) -> None:
        self._opcodes = opcodes
        self._tracer = tracer

    def __getitem__(self, opcode: int) -> Callable[..., Any]:
        function = self._opcodes[opcode]
        tracer = self._tracer

        def traced(computation: Any) -> Any:
            return tracer.run(opcode, function, computation)

        traced.mnemonic = getattr(function, "mnemonic", "")  # type: ignore[attr-defined]
        return traced
