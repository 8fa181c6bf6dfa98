"""The importer: the network's signed record streams and block streams, verified, into the mirror's tables.

Byte level (no database, no network): :mod:`.record_file_reader` with :mod:`.record_file` (v6) and
:mod:`.record_file_legacy` (v5, v2, v1), :mod:`.signature_file`, :mod:`.sidecar_file`, :mod:`.address_book`,
:mod:`.running_hash`, :mod:`.verify` (every check before a file may be written); blocks: :mod:`.block_file`,
:mod:`.block_hash`, :mod:`.block_verify`, :mod:`.wrapped_record_file`, :mod:`.block_items`.
Sources: :mod:`.sources` (folders and buckets), :mod:`.downloader`, :mod:`.block_source`, :mod:`.block_node`.
Running an import: :mod:`.pipeline` (record files) and :mod:`.block_pipeline` (blocks) feed the one
:mod:`.driver`, which builds rows with :mod:`.handlers` and writes them through ``db/``; :mod:`.cutover` picks
the stream and :mod:`.import_run` runs ``ledgermirror import``. See ARCHITECTURE.md and docs/importer.md.
"""
