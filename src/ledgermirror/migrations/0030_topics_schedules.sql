-- 0030_topics_schedules: the reference tables the importer writes for consensus topics, topic messages,
-- schedules and their signatures, with the reference's keys and indexes.
--
-- Columns, types, order, NOT NULL and defaults follow the final state of the reference v1 schema. Every
-- statement is IF NOT EXISTS, so the file can run over a reference database that already has these tables
-- (existing tables and indexes are left as they are). Conventions as in 0002_tables.sql: encoded entity ids,
-- nanosecond timestamps, a <name>_history twin created LIKE its table (no key) for versioned tables.

-- topic: the keys of a consensus topic (memo, auto-renew, deleted and expiry live in entity) ----------

CREATE TABLE IF NOT EXISTS topic (
    admin_key           bytea,
    created_timestamp   bigint,
    id                  bigint    NOT NULL,
    fee_exempt_key_list bytea,
    fee_schedule_key    bytea,
    submit_key          bytea,
    timestamp_range     int8range NOT NULL,
    PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS topic_history (LIKE topic INCLUDING DEFAULTS);

CREATE INDEX IF NOT EXISTS topic_history__id_lower_timestamp
    ON topic_history (id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS topic_history__timestamp_range
    ON topic_history USING gist (timestamp_range);

-- topic_message: one row per successful ConsensusSubmitMessage (append-only, no key) ---------------------

CREATE TABLE IF NOT EXISTS topic_message (
    consensus_timestamp    nanos_timestamp NOT NULL,
    message                bytea           NOT NULL,
    running_hash           bytea           NOT NULL,
    sequence_number        bigint          NOT NULL,
    running_hash_version   smallint,
    chunk_num              integer,
    chunk_total            integer,
    payer_account_id       entity_id,
    valid_start_timestamp  nanos_timestamp,
    topic_id               bigint          NOT NULL,
    initial_transaction_id bytea
);

CREATE INDEX IF NOT EXISTS topic_message__topic_id_timestamp
    ON topic_message (topic_id, consensus_timestamp);
CREATE INDEX IF NOT EXISTS topic_message__topic_id_seqnum
    ON topic_message (topic_id, sequence_number);

-- topic_message_lookup: which topic_message partition holds which sequence numbers (off by default in
-- the reference importer; kept so a reference database and ours have the same tables)

CREATE TABLE IF NOT EXISTS topic_message_lookup (
    partition             text      NOT NULL,
    sequence_number_range int8range NOT NULL,
    timestamp_range       int8range NOT NULL,
    topic_id              bigint    NOT NULL,
    PRIMARY KEY (topic_id, partition)
);

-- schedule: one row per ScheduleCreate; executed_timestamp set by the scheduled child -------------------

CREATE TABLE IF NOT EXISTS schedule (
    consensus_timestamp bigint  NOT NULL,
    creator_account_id  bigint  NOT NULL,
    executed_timestamp  bigint,
    payer_account_id    bigint  NOT NULL,
    schedule_id         bigint  NOT NULL,
    transaction_body    bytea   NOT NULL,
    expiration_time     bigint,
    wait_for_expiry     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (schedule_id)
);

CREATE INDEX IF NOT EXISTS schedule__creator_account_id
    ON schedule (creator_account_id DESC);

-- transaction_signature: the signatures of ScheduleCreate and ScheduleSign (append-only, no key) ---------

CREATE TABLE IF NOT EXISTS transaction_signature (
    consensus_timestamp bigint NOT NULL,
    public_key_prefix   bytea  NOT NULL,
    entity_id           bigint,
    signature           bytea  NOT NULL,
    type                smallint
);

CREATE INDEX IF NOT EXISTS transaction_signature__entity_id
    ON transaction_signature (entity_id DESC, consensus_timestamp DESC);
