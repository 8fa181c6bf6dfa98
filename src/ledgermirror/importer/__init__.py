"""The importer: reading and verifying the network's signed record streams (no database, no network here yet).

Byte-level modules: :mod:`.record_file` (v6) and :mod:`.record_file_legacy` (v5, v2, v1) parse record files into
:class:`.record_file.RecordFile`; :mod:`.signature_file`, :mod:`.sidecar_file` and :mod:`.address_book` read
the companions; :mod:`.running_hash` folds the v5/v6 running hash; :mod:`.verify` runs every check before a
file may be written.
"""
