"""The EVM that answers ``POST /api/v1/contracts/call``: py-evm (docs/contracts-call.md says why) over a state
read through from the mirror's tables on first use. No I/O of its own: the caller passes a
:class:`~ledgermirror.evm.state.StateReader`."""
