-- 0031_contracts: the reference tables the importer writes for smart contracts and Ethereum transactions:
-- contract results, their logs, storage state changes and current state, call actions (from sidecars) and
-- decoded Ethereum transactions, with the reference's keys and indexes.
--
-- Columns, types, order, NOT NULL and defaults follow the final state of the reference v1 schema. Every
-- statement is IF NOT EXISTS, so the file can run over a reference database that already has these tables.

-- contract_result: one row per contract call, create, Ethereum transaction or precompile child ---------------

CREATE TABLE IF NOT EXISTS contract_result (
    function_parameters  bytea    NOT NULL,
    gas_limit            bigint   NOT NULL,
    function_result      bytea,
    gas_used             bigint,
    consensus_timestamp  bigint   NOT NULL,
    amount               bigint,
    bloom                bytea,
    call_result          bytea,
    contract_id          bigint   NOT NULL,
    created_contract_ids bigint[],
    error_message        text,
    payer_account_id     bigint   NOT NULL,
    sender_id            bigint,
    failed_initcode      bytea,
    transaction_hash     bytea,
    transaction_index    integer,
    transaction_result   smallint NOT NULL,
    transaction_nonce    integer  NOT NULL DEFAULT 0,
    gas_consumed         bigint,
    PRIMARY KEY (consensus_timestamp)
);

CREATE INDEX IF NOT EXISTS contract_result__id_timestamp
    ON contract_result (contract_id, consensus_timestamp);
CREATE INDEX IF NOT EXISTS contract_result__id_sender_timestamp
    ON contract_result (contract_id, sender_id, consensus_timestamp);
CREATE INDEX IF NOT EXISTS contract_result__sender_timestamp
    ON contract_result (sender_id, consensus_timestamp);

-- contract_log: one row per logInfo of a result (index runs per record file) --------------------------------

CREATE TABLE IF NOT EXISTS contract_log (
    bloom               bytea   NOT NULL,
    consensus_timestamp bigint  NOT NULL,
    contract_id         bigint  NOT NULL,
    data                bytea   NOT NULL,
    index               integer NOT NULL,
    topic0              bytea,
    topic1              bytea,
    topic2              bytea,
    topic3              bytea,
    payer_account_id    bigint  NOT NULL,
    root_contract_id    bigint,
    transaction_hash    bytea,
    transaction_index   integer,
    synthetic           boolean,
    PRIMARY KEY (consensus_timestamp, index)
);

CREATE INDEX IF NOT EXISTS contract_log__contract_id_timestamp_index
    ON contract_log (contract_id, consensus_timestamp DESC, index);

-- contract_action: the call tree of a transaction (sidecar actions) -----------------------------------------

CREATE TABLE IF NOT EXISTS contract_action (
    call_depth          integer     NOT NULL,
    call_type           integer,
    caller              bigint,
    caller_type         entity_type DEFAULT 'CONTRACT',
    consensus_timestamp bigint      NOT NULL,
    gas                 bigint      NOT NULL,
    gas_used            bigint      NOT NULL,
    index               integer     NOT NULL,
    input               bytea,
    recipient_account   bigint,
    recipient_address   bytea,
    recipient_contract  bigint,
    result_data         bytea,
    result_data_type    integer     NOT NULL,
    value               bigint      NOT NULL,
    call_operation_type integer,
    payer_account_id    bigint      NOT NULL,
    PRIMARY KEY (consensus_timestamp, index)
);

-- contract_state: the current value of each storage slot ---------------------------------------------------

CREATE TABLE IF NOT EXISTS contract_state (
    contract_id        bigint NOT NULL,
    created_timestamp  bigint NOT NULL,
    modified_timestamp bigint NOT NULL,
    slot               bytea  NOT NULL,
    value              bytea,
    PRIMARY KEY (contract_id, slot)
);

-- contract_state_change: every slot read or written by a transaction (sidecar state changes) ----------------

CREATE TABLE IF NOT EXISTS contract_state_change (
    consensus_timestamp bigint  NOT NULL,
    contract_id         bigint  NOT NULL,
    payer_account_id    bigint  NOT NULL,
    slot                bytea   NOT NULL,
    value_read          bytea   NOT NULL,
    value_written       bytea,
    migration           boolean NOT NULL DEFAULT false,
    PRIMARY KEY (consensus_timestamp, contract_id, slot)
);

CREATE INDEX IF NOT EXISTS contract_state_change__id_slot_timestamp
    ON contract_state_change (contract_id, slot, consensus_timestamp);

-- ethereum_transaction: the decoded RLP of an EthereumTransaction --------------------------------------------

CREATE TABLE IF NOT EXISTS ethereum_transaction (
    access_list              bytea,
    call_data_id             bigint,
    call_data                bytea,
    chain_id                 bytea,
    consensus_timestamp      bigint   NOT NULL,
    data                     bytea    NOT NULL,
    gas_limit                bigint   NOT NULL,
    gas_price                bytea,
    hash                     bytea    NOT NULL,
    max_fee_per_gas          bytea,
    max_gas_allowance        bigint   NOT NULL,
    max_priority_fee_per_gas bytea,
    nonce                    bigint   NOT NULL,
    payer_account_id         bigint   NOT NULL,
    recovery_id              smallint,
    signature_r              bytea    NOT NULL,
    signature_s              bytea    NOT NULL,
    signature_v              bytea,
    to_address               bytea,
    type                     smallint NOT NULL,
    value                    bytea,
    authorization_list       jsonb,
    PRIMARY KEY (consensus_timestamp)
);
