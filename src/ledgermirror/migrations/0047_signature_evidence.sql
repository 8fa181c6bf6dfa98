-- 0047_signature_evidence: per imported record file or block, which consensus nodes of the address book in
-- force signed it validly, whose signature file was present but failed, and whose was missing (ours; the status
-- service derives the consensus nodes' status from it). One row per file, node ids in arrays (not a row per
-- signature). Blocks whose proof carries no per-node signatures (TSS, state proofs) get no row.

CREATE TABLE IF NOT EXISTS signature_evidence (
    consensus_end  bigint                 NOT NULL,
    name           character varying(250) NOT NULL,
    imported_at    bigint                 NOT NULL,
    valid_nodes    integer[]              NOT NULL,
    failed_nodes   integer[]              NOT NULL,
    missing_nodes  integer[]              NOT NULL,
    PRIMARY KEY (consensus_end)
);
CREATE INDEX IF NOT EXISTS signature_evidence__imported_at ON signature_evidence (imported_at);
