"""A deterministic simulated network: node keys, address book, signed v6 record streams with sidecars, and
``truth.json`` (what the REST API must answer after importing them). ``ledgermirror simulate`` runs it.

Modules: :mod:`.run` (``simulate``, the output layout), :mod:`.keys` (node RSA keys from the seed),
:mod:`.stream_files` (record, signature and sidecar file bytes), :mod:`.emitter` (one transaction and its
record, fees and transfer lists), :mod:`.mix` (what each slot does), the generators :mod:`.crypto`,
:mod:`.tokens`, :mod:`.services`, :mod:`.system`, the state :mod:`.ledger_state` and :mod:`.truth`.
"""
