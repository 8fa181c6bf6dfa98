-- bench/reference_layout.sql: turn a database migrated (and usually loaded) with our schema into the
-- reference's layout of the same tables (docs/performance.md, "Two layouts"). A bench-side transformation:
-- the schema itself is declared once, in src/ledgermirror/migrations and db/schema.
--
-- * account_balance and token_balance: RANGE-partitioned on consensus_timestamp, one partition per month over
--   the rows' span (production's interval; the reference's spec harness uses 10-year ones) plus a default
--   partition; same columns, same primary keys, token_balance's (token_id, account_id, consensus_timestamp).
-- * transaction_hash: LIST-partitioned on mod(get_byte(hash, 0), 32) into transaction_hash_00 .. _31, with the
--   reference's hash index on substring(hash from 1 for 32) (ours is a btree on the same expression).
-- * The reference's index set on the tables the API reads: our two extra indexes dropped
--   (token__type_token_id, address_book__file_id_start_consensus_timestamp); nft_history's
--   gist (account_id, timestamp_range) instead of our btree stand-in where btree_gist is available, and
--   token__name (pg_trgm) where pg_trgm is (our migration already creates it then).
--
-- Set bench.partitions_since (a date) to create the monthly partitions from that month on, empty before the
-- rows (a production database has one per month since it started importing: 2019 for mainnet).
--
-- Rows move in one transaction per statement group; a table that is already partitioned is left alone, so the
-- file can run again. Run ANALYZE afterwards.

CREATE OR REPLACE FUNCTION pg_temp.partition_by_month(target text, key_columns text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    plain text := target || '_unpartitioned';
    low bigint;
    high bigint;
    month timestamp;
    next_month timestamp;
    last_month timestamp;
    index_row record;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = to_regclass(target)) = 'p' THEN
        RETURN;
    END IF;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', target, plain);
    EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', plain, target || '_pkey', plain || '_pkey');
    FOR index_row IN
        SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = to_regclass(plain) AND NOT i.indisprimary
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', index_row.relname, index_row.relname || '_unpartitioned');
    END LOOP;
    EXECUTE format(
        'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS) PARTITION BY RANGE (consensus_timestamp)', target, plain
    );
    EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (%s)', target, key_columns);
    EXECUTE format('SELECT min(consensus_timestamp), max(consensus_timestamp) FROM %I', plain) INTO low, high;
    IF low IS NOT NULL THEN
        month := date_trunc('month', to_timestamp(low / 1e9) AT TIME ZONE 'UTC');
        last_month := date_trunc('month', to_timestamp(high / 1e9) AT TIME ZONE 'UTC');
        -- bench.partitions_since (bench/generate --partitions-since): empty months before the rows, as a
        -- database that has been importing since then has them.
        month := least(month, date_trunc('month', nullif(current_setting('bench.partitions_since', true), '')::timestamp));
        WHILE month <= last_month LOOP
            next_month := month + interval '1 month';
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
                target || to_char(month, '"_p"YYYY_MM'),
                target,
                (extract(epoch FROM month AT TIME ZONE 'UTC') * 1000000000)::bigint,
                (extract(epoch FROM next_month AT TIME ZONE 'UTC') * 1000000000)::bigint
            );
            month := next_month;
        END LOOP;
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', target || '_default', target);
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', target, plain);  -- in the rows' physical order
    EXECUTE format('DROP TABLE %I', plain);
END
$$;

SELECT pg_temp.partition_by_month('account_balance', 'account_id, consensus_timestamp');
SELECT pg_temp.partition_by_month('token_balance', 'account_id, token_id, consensus_timestamp');
CREATE INDEX IF NOT EXISTS token_balance__token_account_timestamp
    ON token_balance (token_id, account_id, consensus_timestamp);

DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('transaction_hash')) = 'p' THEN
        RETURN;
    END IF;
    ALTER TABLE transaction_hash RENAME TO transaction_hash_unpartitioned;
    ALTER INDEX transaction_hash__hash RENAME TO transaction_hash__hash_unpartitioned;
    CREATE TABLE transaction_hash (LIKE transaction_hash_unpartitioned INCLUDING DEFAULTS)
        PARTITION BY LIST (mod(get_byte(hash, 0), 32));
    FOR part IN 0..31 LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF transaction_hash FOR VALUES IN (%s)',
            'transaction_hash_' || lpad(part::text, 2, '0'),
            part
        );
    END LOOP;
    INSERT INTO transaction_hash SELECT * FROM transaction_hash_unpartitioned;
    DROP TABLE transaction_hash_unpartitioned;
    CREATE INDEX transaction_hash__hash ON transaction_hash USING hash (substring(hash FROM 1 FOR 32));
END
$$;

-- Our own indexes on tables the reference indexes otherwise.
DROP INDEX IF EXISTS token__type_token_id;
DROP INDEX IF EXISTS address_book__file_id_start_consensus_timestamp;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gist') THEN
        CREATE EXTENSION IF NOT EXISTS btree_gist;
        DROP INDEX IF EXISTS nft_history__account_lower_timestamp;
        CREATE INDEX IF NOT EXISTS nft_history__account_id_timestamp_range
            ON nft_history USING gist (account_id, timestamp_range);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX IF NOT EXISTS token__name ON token USING gin (name gin_trgm_ops);
    END IF;
END
$$;
