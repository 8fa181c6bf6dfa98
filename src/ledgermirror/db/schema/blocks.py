"""Record files: the blocks of the record stream."""

from __future__ import annotations

from ledgermirror.db.schema.model import Table, not_null, nullable

RECORD_FILE = Table(
    "record_file",
    (
        not_null("name", "character varying(250)"),
        not_null("load_start", "bigint"),
        not_null("load_end", "bigint"),
        not_null("hash", "character varying(96)"),
        not_null("prev_hash", "character varying(96)"),
        not_null("consensus_start", "bigint"),
        not_null("consensus_end", "bigint"),
        not_null("count", "bigint"),
        not_null("digest_algorithm", "integer"),
        nullable("hapi_version_major", "integer"),
        nullable("hapi_version_minor", "integer"),
        nullable("hapi_version_patch", "integer"),
        not_null("version", "integer"),
        not_null("file_hash", "character varying(96)"),
        nullable("bytes", "bytea"),
        not_null("index", "bigint"),
        nullable("gas_used", "bigint", -1),
        nullable("logs_bloom", "bytea"),
        nullable("size", "integer"),
        not_null("sidecar_count", "integer", 0),
        nullable("software_version_major", "integer"),
        nullable("software_version_minor", "integer"),
        nullable("software_version_patch", "integer"),
        nullable("round_start", "bigint"),
        nullable("round_end", "bigint"),
        nullable("previous_wrapped_record_block_hash", "bytea"),
        nullable("wrapped_record_block_hash", "bytea"),
        nullable("receipts_root", "bytea"),
    ),
    key=("consensus_end",),
)

SIDECAR_FILE = Table(
    "sidecar_file",
    (
        nullable("bytes", "bytea"),
        nullable("count", "integer"),
        not_null("consensus_end", "bigint"),
        not_null("hash_algorithm", "integer"),
        not_null("hash", "bytea"),
        not_null("id", "integer"),
        not_null("name", "character varying(250)"),
        nullable("size", "integer"),
        not_null("types", "integer[]"),
    ),
    key=("consensus_end", "id"),
)


IMPORT_STATUS = Table(
    "import_status",
    (
        not_null("id", "smallint", 1),
        not_null("stream", "character varying(16)"),
        not_null("last_index", "bigint"),
        not_null("last_name", "character varying(250)"),
        not_null("last_consensus_end", "bigint"),
        not_null("last_proof", "character varying(32)"),
        not_null("last_proof_verified", "boolean"),
        not_null("chain_only_blocks", "bigint", 0),
        nullable("first_chain_only_index", "bigint"),
    ),
    key=("id",),
)
"""Ours (migration 0040): the stream the importer last took a block or file from and how its proof was verified
(blocks accepted on the hash chain only are counted)."""


SIGNATURE_EVIDENCE = Table(
    "signature_evidence",
    (
        not_null("consensus_end", "bigint"),
        not_null("name", "character varying(250)"),
        not_null("imported_at", "bigint"),
        not_null("valid_nodes", "integer[]"),
        not_null("failed_nodes", "integer[]"),
        not_null("missing_nodes", "integer[]"),
    ),
    key=("consensus_end",),
)
"""Ours (migration 0047): per record file or block, the book nodes whose signatures were valid, present but
failing, or missing (the status service's evidence)."""
