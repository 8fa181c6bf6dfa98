"""The EVM of ``POST /api/v1/contracts/call`` and of opcode traces: py-evm (docs/contracts-call.md says why) over
a state read through, on first use, from a :class:`~ledgermirror.evm.state.StateReader`. No database of its own:
the API answers the reader's questions (``evm/worker.py`` runs calls in a worker process)."""
