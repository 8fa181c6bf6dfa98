-- 0035_importer_rows: the reference tables the importer still lacked: the contract transaction links and
-- Ethereum/contract hashes (`contract_transaction`, `contract_transaction_hash`), the sidecar files of a
-- record file (`sidecar_file`), the ledger id of a LedgerIdPublication (`ledger`) and the history twin of
-- `registered_node` (RegisteredNodeCreate/Update/Delete keep its earlier states, as the reference does).
--
-- Every statement is IF NOT EXISTS, so the file can run over a reference database that already has these
-- tables.

-- contract_transaction: one row per contract or account involved in an item with a contract result ---------

CREATE TABLE IF NOT EXISTS contract_transaction (
    consensus_timestamp bigint   NOT NULL,
    contract_ids        bigint[] NOT NULL,
    entity_id           bigint   NOT NULL,
    payer_account_id    bigint   NOT NULL,
    PRIMARY KEY (consensus_timestamp, entity_id)
);

CREATE INDEX IF NOT EXISTS contract_transaction__entity_timestamp
    ON contract_transaction (entity_id, consensus_timestamp);

-- contract_transaction_hash: a contract result's 32-byte hash (the Ethereum hash, else the record hash's
-- first 32 bytes) -------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS contract_transaction_hash (
    consensus_timestamp bigint   NOT NULL,
    entity_id           bigint   NOT NULL,
    hash                bytea    NOT NULL,
    payer_account_id    bigint   NOT NULL,
    transaction_result  smallint NOT NULL
);

CREATE INDEX IF NOT EXISTS contract_transaction_hash__hash
    ON contract_transaction_hash USING hash (hash);

-- sidecar_file: one row per sidecar of a record file (id = the sidecar's number in its name) ----------------

CREATE TABLE IF NOT EXISTS sidecar_file (
    bytes          bytea,
    count          integer,
    consensus_end  bigint                 NOT NULL,
    hash_algorithm integer                NOT NULL,
    hash           bytea                  NOT NULL,
    id             integer                NOT NULL,
    name           character varying(250) NOT NULL,
    size           integer,
    types          integer[]              NOT NULL,
    PRIMARY KEY (consensus_end, id)
);

-- ledger: the network's ledger id (LedgerIdPublication; the last publication wins) --------------------------

CREATE TABLE IF NOT EXISTS ledger (
    consensus_timestamp            bigint NOT NULL,
    history_proof_verification_key bytea  NOT NULL,
    ledger_id                      bytea  NOT NULL,
    node_contributions             jsonb  NOT NULL,
    PRIMARY KEY (ledger_id)
);

-- registered_node_history: earlier states of registered nodes -----------------------------------------------

CREATE TABLE IF NOT EXISTS registered_node_history (LIKE registered_node INCLUDING DEFAULTS);
