-- 0023_network_freeze_prng: tables the importer writes for Freeze (23) and UtilPrng (52) transactions,
-- as in the reference schema (append-only, keyed by consensus timestamp).

CREATE TABLE IF NOT EXISTS network_freeze (
    consensus_timestamp bigint   NOT NULL,
    end_time            bigint,
    file_hash           bytea    NOT NULL,
    file_id             bigint,
    payer_account_id    bigint   NOT NULL,
    start_time          bigint   NOT NULL,
    type                smallint NOT NULL,
    PRIMARY KEY (consensus_timestamp)
);

CREATE TABLE IF NOT EXISTS prng (
    consensus_timestamp bigint  NOT NULL,
    payer_account_id    bigint  NOT NULL,
    range               integer NOT NULL,
    prng_bytes          bytea,
    prng_number         integer,
    PRIMARY KEY (consensus_timestamp)
);
