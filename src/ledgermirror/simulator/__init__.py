"""A deterministic simulated network: node keys, address book, signed record streams (v6 with sidecars, v5, v2)
or blocks (wrapped record blocks, a cutover, native blocks), and ``truth.json`` (what the REST API must answer
after importing them). ``ledgermirror simulate`` runs it.

Modules: :mod:`.run` (``simulate``, the output layout), :mod:`.keys` (node RSA keys from the seed),
:mod:`.stream_files` (record, signature and sidecar file bytes), :mod:`.emitter` (one transaction and its
record, fees and transfer lists), :mod:`.mix` (what each slot does), the generators :mod:`.crypto`,
:mod:`.tokens`, :mod:`.services`, :mod:`.system` and the others ARCHITECTURE.md lists, the state
:mod:`.ledger_state` and :mod:`.truth`; :mod:`.block_files` and :mod:`.native_blocks` write the block formats.
"""
