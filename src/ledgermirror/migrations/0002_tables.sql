-- 0002_tables: all tables, with their _history twins.
--
-- Column names, types, order, NOT NULL and defaults follow the final state of the
-- reference mirror node schema (v1 migrations). Every statement is
-- CREATE TABLE IF NOT EXISTS, so the file can run over a database that already
-- has these tables. Existing tables are left as they are.
--
-- Conventions:
-- * Every *_id, owner, spender and token_id column holds an encoded entity id (int64).
-- * Every *_timestamp column and every timestamp_range bound holds nanoseconds since the epoch.
-- * A versioned table holds the current row per key with an open range [valid_from,) and
--   its <name>_history twin holds superseded rows with closed ranges [valid_from, valid_to).
--   A history table is created with LIKE <table> INCLUDING DEFAULTS, which copies the
--   columns in order with their types, NOT NULL and defaults but no primary key. History
--   tables have no primary key.
-- * There are no foreign keys and no sequences.
--
-- Primary keys are declared inline and get PostgreSQL's default <table>_pkey name.
-- Secondary indexes are in 0003_indexes.sql.

-- Accounts, balances, tokens, NFTs, allowances, rewards, airdrops ---------------

CREATE TABLE IF NOT EXISTS entity (
    auto_renew_account_id            bigint,
    auto_renew_period                bigint,
    created_timestamp                bigint,
    deleted                          boolean,
    expiration_timestamp             bigint,
    id                               bigint            NOT NULL,
    key                              bytea,
    memo                             text              NOT NULL DEFAULT '',
    num                              bigint            NOT NULL,
    public_key                       character varying,
    proxy_account_id                 bigint,
    realm                            bigint            NOT NULL,
    shard                            bigint            NOT NULL,
    receiver_sig_required            boolean,
    max_automatic_token_associations integer,
    timestamp_range                  int8range         NOT NULL,
    type                             entity_type       NOT NULL DEFAULT 'UNKNOWN',
    alias                            bytea,
    ethereum_nonce                   bigint                     DEFAULT 0,
    evm_address                      bytea,
    decline_reward                   boolean           NOT NULL DEFAULT false,
    staked_account_id                bigint,
    staked_node_id                   bigint                     DEFAULT -1,
    stake_period_start               bigint                     DEFAULT -1,
    obtainer_id                      bigint,
    permanent_removal                boolean,
    balance                          bigint,
    balance_timestamp                bigint,
    delegation_address               bytea,
    PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS entity_history (LIKE entity INCLUDING DEFAULTS);

-- account_balance is RANGE-partitioned on consensus_timestamp in the reference.
-- Here it is a plain (unpartitioned) table with the same columns and primary key.
CREATE TABLE IF NOT EXISTS account_balance (
    consensus_timestamp nanos_timestamp NOT NULL,
    balance             hbar_tinybars   NOT NULL,
    account_id          entity_id       NOT NULL,
    PRIMARY KEY (account_id, consensus_timestamp)
);

-- token_balance is RANGE-partitioned on consensus_timestamp in the reference.
-- Here it is a plain (unpartitioned) table with the same columns and primary key.
CREATE TABLE IF NOT EXISTS token_balance (
    consensus_timestamp bigint    NOT NULL,
    account_id          entity_id NOT NULL,
    balance             bigint    NOT NULL,
    token_id            entity_id NOT NULL,
    PRIMARY KEY (account_id, token_id, consensus_timestamp)
);

CREATE TABLE IF NOT EXISTS account_balance_file (
    consensus_timestamp bigint                 NOT NULL,
    count               bigint                 NOT NULL,
    load_start          bigint                 NOT NULL,
    load_end            bigint                 NOT NULL,
    file_hash           character varying(96),
    name                character varying(250) NOT NULL,
    bytes               bytea,
    time_offset         integer                NOT NULL DEFAULT 0,
    synthetic           boolean                NOT NULL DEFAULT false,
    PRIMARY KEY (consensus_timestamp)
);

CREATE TABLE IF NOT EXISTS token (
    token_id            entity_id              NOT NULL,
    created_timestamp   bigint                 NOT NULL,
    decimals            bigint                 NOT NULL,
    freeze_default      boolean                NOT NULL DEFAULT false,
    freeze_key          bytea,
    initial_supply      bigint                 NOT NULL,
    kyc_key             bytea,
    name                character varying(100) NOT NULL,
    supply_key          bytea,
    symbol              character varying(100) NOT NULL,
    total_supply        bigint                 NOT NULL DEFAULT 0,
    treasury_account_id entity_id              NOT NULL,
    wipe_key            bytea,
    max_supply          bigint                 NOT NULL DEFAULT 9223372036854775807,
    supply_type         token_supply_type      NOT NULL DEFAULT 'INFINITE',
    type                token_type             NOT NULL DEFAULT 'FUNGIBLE_COMMON',
    fee_schedule_key    bytea,
    pause_key           bytea,
    pause_status        token_pause_status     NOT NULL DEFAULT 'NOT_APPLICABLE',
    timestamp_range     int8range              NOT NULL,
    freeze_status       smallint               NOT NULL,
    kyc_status          smallint               NOT NULL,
    metadata            bytea,
    metadata_key        bytea,
    PRIMARY KEY (token_id)
);

CREATE TABLE IF NOT EXISTS token_history (LIKE token INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS token_account (
    account_id            bigint    NOT NULL,
    associated            boolean   NOT NULL DEFAULT false,
    automatic_association boolean,
    created_timestamp     bigint,
    freeze_status         smallint,
    kyc_status            smallint,
    timestamp_range       int8range NOT NULL,
    token_id              bigint    NOT NULL,
    balance               bigint    NOT NULL DEFAULT 0,
    balance_timestamp     bigint,
    PRIMARY KEY (account_id, token_id)
);

CREATE TABLE IF NOT EXISTS token_account_history (LIKE token_account INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS crypto_allowance (
    amount_granted   bigint    NOT NULL,
    owner            bigint    NOT NULL,
    payer_account_id bigint    NOT NULL,
    spender          bigint    NOT NULL,
    timestamp_range  int8range NOT NULL,
    amount           bigint    NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, spender)
);

CREATE TABLE IF NOT EXISTS crypto_allowance_history (LIKE crypto_allowance INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS token_allowance (
    amount_granted   bigint    NOT NULL,
    owner            bigint    NOT NULL,
    payer_account_id bigint    NOT NULL,
    spender          bigint    NOT NULL,
    timestamp_range  int8range NOT NULL,
    token_id         bigint    NOT NULL,
    amount           bigint    NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, spender, token_id)
);

CREATE TABLE IF NOT EXISTS token_allowance_history (LIKE token_allowance INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS nft_allowance (
    approved_for_all boolean   NOT NULL,
    owner            bigint    NOT NULL,
    payer_account_id bigint    NOT NULL,
    spender          bigint    NOT NULL,
    timestamp_range  int8range NOT NULL,
    token_id         bigint    NOT NULL,
    PRIMARY KEY (owner, spender, token_id)
);

CREATE TABLE IF NOT EXISTS nft_allowance_history (LIKE nft_allowance INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS nft (
    account_id         bigint,
    created_timestamp  bigint,
    deleted            boolean            DEFAULT false,
    metadata           bytea,
    serial_number      bigint    NOT NULL,
    token_id           bigint    NOT NULL,
    delegating_spender bigint,
    spender            bigint,
    timestamp_range    int8range NOT NULL,
    PRIMARY KEY (token_id, serial_number)
);

CREATE TABLE IF NOT EXISTS nft_history (LIKE nft INCLUDING DEFAULTS);

-- serial_number is 0 for a fungible airdrop. The reference has no primary key here,
-- uniqueness comes from the unique index token_airdrop__sender_id (0003).
CREATE TABLE IF NOT EXISTS token_airdrop (
    amount              bigint,
    receiver_account_id bigint        NOT NULL,
    sender_account_id   bigint        NOT NULL,
    serial_number       bigint        NOT NULL,
    state               airdrop_state NOT NULL DEFAULT 'PENDING',
    timestamp_range     int8range     NOT NULL,
    token_id            bigint        NOT NULL
);

CREATE TABLE IF NOT EXISTS token_airdrop_history (LIKE token_airdrop INCLUDING DEFAULTS);

-- Plain in the reference v1 schema (not partitioned).
CREATE TABLE IF NOT EXISTS staking_reward_transfer (
    account_id          bigint NOT NULL,
    amount              bigint NOT NULL,
    consensus_timestamp bigint NOT NULL,
    payer_account_id    bigint NOT NULL,
    PRIMARY KEY (consensus_timestamp, account_id)
);

CREATE TABLE IF NOT EXISTS entity_stake (
    end_stake_period     bigint    NOT NULL,
    id                   bigint    NOT NULL,
    pending_reward       bigint    NOT NULL,
    staked_node_id_start bigint    NOT NULL,
    staked_to_me         bigint    NOT NULL,
    stake_total_start    bigint    NOT NULL,
    timestamp_range      int8range NOT NULL,
    PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS entity_stake_history (LIKE entity_stake INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS custom_fee (
    fixed_fees      jsonb,
    fractional_fees jsonb,
    royalty_fees    jsonb,
    timestamp_range int8range NOT NULL,
    entity_id       bigint    NOT NULL,
    PRIMARY KEY (entity_id)
);

CREATE TABLE IF NOT EXISTS custom_fee_history (LIKE custom_fee INCLUDING DEFAULTS);

-- Blocks ------------------------------------------------------------------------

-- load_start and load_end are epoch seconds, not nanoseconds.
CREATE TABLE IF NOT EXISTS record_file (
    name                               character varying(250) NOT NULL,
    load_start                         bigint                 NOT NULL,
    load_end                           bigint                 NOT NULL,
    hash                               character varying(96)  NOT NULL,
    prev_hash                          character varying(96)  NOT NULL,
    consensus_start                    bigint                 NOT NULL,
    consensus_end                      bigint                 NOT NULL,
    count                              bigint                 NOT NULL,
    digest_algorithm                   integer                NOT NULL,
    hapi_version_major                 integer,
    hapi_version_minor                 integer,
    hapi_version_patch                 integer,
    version                            integer                NOT NULL,
    file_hash                          character varying(96)  NOT NULL,
    bytes                              bytea,
    index                              bigint                 NOT NULL,
    gas_used                           bigint                          DEFAULT -1,
    logs_bloom                         bytea,
    size                               integer,
    sidecar_count                      integer                NOT NULL DEFAULT 0,
    software_version_major             integer,
    software_version_minor             integer,
    software_version_patch             integer,
    round_start                        bigint,
    round_end                          bigint,
    previous_wrapped_record_block_hash bytea,
    wrapped_record_block_hash          bytea,
    receipts_root                      bytea,
    PRIMARY KEY (consensus_end)
);

-- Network -----------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS address_book (
    start_consensus_timestamp nanos_timestamp NOT NULL,
    end_consensus_timestamp   nanos_timestamp,
    file_id                   entity_id       NOT NULL,
    node_count                integer,
    file_data                 bytea           NOT NULL,
    PRIMARY KEY (start_consensus_timestamp)
);

CREATE TABLE IF NOT EXISTS address_book_entry (
    consensus_timestamp nanos_timestamp         NOT NULL,
    memo                character varying(128),
    public_key          character varying(1024),
    node_id             bigint                  NOT NULL,
    node_account_id     entity_id               NOT NULL,
    node_cert_hash      bytea,
    description         character varying(100),
    stake               bigint,
    PRIMARY KEY (consensus_timestamp, node_id)
);

-- No primary key in the reference.
CREATE TABLE IF NOT EXISTS address_book_service_endpoint (
    consensus_timestamp bigint                 NOT NULL,
    ip_address_v4       character varying(15)  NOT NULL DEFAULT '',
    node_id             bigint                 NOT NULL,
    port                integer                NOT NULL,
    domain_name         character varying(253) NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS node (
    admin_key                   bytea,
    created_timestamp           bigint,
    deleted                     boolean   NOT NULL DEFAULT false,
    node_id                     bigint    NOT NULL,
    timestamp_range             int8range NOT NULL,
    decline_reward              boolean   NOT NULL DEFAULT false,
    grpc_proxy_endpoint         jsonb,
    account_id                  bigint,
    associated_registered_nodes bigint[],
    PRIMARY KEY (node_id)
);

CREATE TABLE IF NOT EXISTS node_history (LIKE node INCLUDING DEFAULTS);

-- staking_period is the last nanosecond of the staking day, epoch_day a day number.
CREATE TABLE IF NOT EXISTS node_stake (
    consensus_timestamp bigint NOT NULL,
    epoch_day           bigint NOT NULL,
    node_id             bigint NOT NULL,
    reward_rate         bigint NOT NULL,
    stake               bigint NOT NULL,
    stake_rewarded      bigint NOT NULL,
    staking_period      bigint NOT NULL,
    max_stake           bigint NOT NULL,
    min_stake           bigint NOT NULL,
    stake_not_rewarded  bigint NOT NULL,
    PRIMARY KEY (consensus_timestamp, node_id)
);

CREATE TABLE IF NOT EXISTS network_stake (
    consensus_timestamp               bigint NOT NULL,
    epoch_day                         bigint NOT NULL,
    max_staking_reward_rate_per_hbar  bigint NOT NULL,
    node_reward_fee_denominator       bigint NOT NULL,
    node_reward_fee_numerator         bigint NOT NULL,
    stake_total                       bigint NOT NULL,
    staking_period                    bigint NOT NULL,
    staking_period_duration           bigint NOT NULL,
    staking_periods_stored            bigint NOT NULL,
    staking_reward_fee_denominator    bigint NOT NULL,
    staking_reward_fee_numerator      bigint NOT NULL,
    staking_reward_rate               bigint NOT NULL,
    staking_start_threshold           bigint NOT NULL,
    max_stake_rewarded                bigint NOT NULL DEFAULT 0,
    max_total_reward                  bigint NOT NULL DEFAULT 0,
    reserved_staking_rewards          bigint NOT NULL DEFAULT 0,
    reward_balance_threshold          bigint NOT NULL DEFAULT 0,
    unreserved_staking_reward_balance bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (consensus_timestamp)
);

CREATE TABLE IF NOT EXISTS file_data (
    file_data           bytea,
    consensus_timestamp nanos_timestamp NOT NULL,
    entity_id           entity_id       NOT NULL,
    transaction_type    smallint        NOT NULL,
    PRIMARY KEY (consensus_timestamp)
);

-- The reference also has registered_node_history. It is not needed here.
CREATE TABLE IF NOT EXISTS registered_node (
    admin_key          bytea,
    created_timestamp  bigint,
    deleted            boolean                NOT NULL DEFAULT false,
    description        character varying(100),
    registered_node_id bigint                 NOT NULL,
    service_endpoints  jsonb,
    timestamp_range    int8range              NOT NULL,
    type               smallint[]             NOT NULL DEFAULT '{}',
    PRIMARY KEY (registered_node_id)
);

-- Transactions ------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS transaction (
    consensus_timestamp            bigint        NOT NULL,
    type                           smallint      NOT NULL,
    result                         smallint      NOT NULL,
    payer_account_id               entity_id     NOT NULL,
    valid_start_ns                 bigint        NOT NULL,
    valid_duration_seconds         bigint,
    node_account_id                entity_id,
    entity_id                      entity_id,
    initial_balance                bigint                 DEFAULT 0,
    max_fee                        hbar_tinybars,
    charged_tx_fee                 bigint,
    memo                           bytea,
    transaction_hash               bytea,
    transaction_bytes              bytea,
    scheduled                      boolean       NOT NULL DEFAULT false,
    nonce                          integer       NOT NULL DEFAULT 0,
    parent_consensus_timestamp     bigint,
    errata                         errata_type,
    index                          integer,
    nft_transfer                   jsonb,
    itemized_transfer              jsonb,
    transaction_record_bytes       bytea,
    max_custom_fees                bytea[],
    batch_key                      bytea,
    inner_transactions             bigint[],
    high_volume                    boolean       NOT NULL DEFAULT false,
    congestion_pricing_multiplier  bigint,
    high_volume_pricing_multiplier bigint,
    PRIMARY KEY (consensus_timestamp)
);

-- No primary key in the reference.
CREATE TABLE IF NOT EXISTS crypto_transfer (
    entity_id           entity_id       NOT NULL,
    consensus_timestamp nanos_timestamp NOT NULL,
    amount              hbar_tinybars   NOT NULL,
    payer_account_id    bigint          NOT NULL,
    is_approval         boolean,
    errata              errata_type
);

-- No primary key in the reference.
CREATE TABLE IF NOT EXISTS token_transfer (
    token_id            entity_id     NOT NULL,
    account_id          entity_id     NOT NULL,
    consensus_timestamp bigint        NOT NULL,
    amount              hbar_tinybars NOT NULL,
    payer_account_id    bigint        NOT NULL,
    is_approval         boolean
);

-- transaction_hash is LIST-partitioned on mod(get_byte(hash, 0), 32) in the reference.
-- Here it is a plain (unpartitioned) table with the same columns and no primary key.
-- hash holds the first 32 bytes of the transaction hash and hash_suffix the remaining bytes.
CREATE TABLE IF NOT EXISTS transaction_hash (
    consensus_timestamp bigint NOT NULL,
    hash                bytea  NOT NULL,
    payer_account_id    bigint,
    hash_suffix         bytea
);

CREATE TABLE IF NOT EXISTS entity_transaction (
    consensus_timestamp bigint   NOT NULL,
    entity_id           bigint   NOT NULL,
    payer_account_id    bigint   NOT NULL,
    result              smallint NOT NULL,
    type                smallint NOT NULL,
    PRIMARY KEY (entity_id, consensus_timestamp)
);

-- No primary key in the reference.
CREATE TABLE IF NOT EXISTS assessed_custom_fee (
    amount                      bigint   NOT NULL,
    collector_account_id        bigint   NOT NULL,
    consensus_timestamp         bigint   NOT NULL,
    token_id                    bigint,
    effective_payer_account_ids bigint[] NOT NULL,
    payer_account_id            bigint   NOT NULL
);

-- Contracts ---------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS contract (
    id               bigint NOT NULL,
    file_id          bigint,
    initcode         bytea,
    runtime_bytecode bytea,
    PRIMARY KEY (id)
);
