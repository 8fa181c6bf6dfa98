-- 0040_import_status: what the importer last accepted and how it verified it (ours; the reference keeps this in
-- logs and metrics). One row. Block streams whose proofs cannot be verified here (TSS, block state proofs) are
-- accepted on the hash chain only: this row says so, for the API and the CLI (`ledgermirror import-status`).

CREATE TABLE IF NOT EXISTS import_status (
    id                       smallint               NOT NULL DEFAULT 1,
    stream                   character varying(16)  NOT NULL,
    last_index               bigint                 NOT NULL,
    last_name                character varying(250) NOT NULL,
    last_consensus_end       bigint                 NOT NULL,
    last_proof               character varying(32)  NOT NULL,
    last_proof_verified      boolean                NOT NULL,
    chain_only_blocks        bigint                 NOT NULL DEFAULT 0,
    first_chain_only_index   bigint,
    PRIMARY KEY (id),
    CHECK (id = 1)
);
