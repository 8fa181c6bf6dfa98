-- 0003_indexes: secondary indexes (primary keys are declared in 0002_tables.sql).
--
-- Every statement is CREATE INDEX IF NOT EXISTS, so the file can run over a database
-- that already has these indexes. Index names match the reference where the name is
-- known, so that running over a reference database does not add duplicates.
-- Indexes added for this API's own queries are named <table>__<columns>.
--
-- Two reference features may be missing from the embedded PostgreSQL:
-- * pg_trgm: the trigram index on token.name is created only when the extension is
--   available (see the DO block at the end).
-- * btree_gist: GiST indexes on timestamp_range alone use the built-in range operator
--   class and need no extension. The one reference GiST index that mixes a scalar
--   column with the range (nft_history account_id + timestamp_range) is replaced by a
--   btree on (account_id, lower(timestamp_range)).

-- entity ------------------------------------------------------------------------

CREATE INDEX IF NOT EXISTS entity__alias
    ON entity (alias) WHERE alias IS NOT NULL;
CREATE INDEX IF NOT EXISTS entity__evm_address
    ON entity (evm_address) WHERE evm_address IS NOT NULL;
CREATE INDEX IF NOT EXISTS entity__public_key_type
    ON entity (public_key, type) WHERE public_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS entity__type_id
    ON entity (type, id);

CREATE INDEX IF NOT EXISTS entity_history__id_lower_timestamp
    ON entity_history (id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS entity_history__timestamp_range
    ON entity_history USING gist (timestamp_range);
CREATE INDEX IF NOT EXISTS entity_history__alias
    ON entity_history (alias) WHERE alias IS NOT NULL;
CREATE INDEX IF NOT EXISTS entity_history__evm_address
    ON entity_history (evm_address) WHERE evm_address IS NOT NULL;

-- balances ----------------------------------------------------------------------

-- account_balance: only its primary key (account_id, consensus_timestamp).

CREATE INDEX IF NOT EXISTS token_balance__token_account_timestamp
    ON token_balance (token_id, account_id, consensus_timestamp);

CREATE INDEX IF NOT EXISTS account_balance_file__name
    ON account_balance_file (name);

-- token -------------------------------------------------------------------------

-- Extra: list tokens by type in token_id order (/api/v1/tokens?type=...).
CREATE INDEX IF NOT EXISTS token__type_token_id
    ON token (type, token_id);

CREATE INDEX IF NOT EXISTS token_history__token_id_timestamp_range
    ON token_history (token_id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS token_history__timestamp_range
    ON token_history USING gist (timestamp_range);

-- token_account -----------------------------------------------------------------

-- The primary key (account_id, token_id) serves the account-side lookups.
CREATE INDEX IF NOT EXISTS token_account__token_id_account_id
    ON token_account (token_id, account_id);

CREATE INDEX IF NOT EXISTS token_account_history__account_token_lower_timestamp
    ON token_account_history (account_id, token_id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS token_account_history__timestamp_range
    ON token_account_history USING gist (timestamp_range);

-- allowances --------------------------------------------------------------------

-- crypto_allowance and token_allowance: only their primary keys
-- (owner, spender) and (owner, spender, token_id).

-- The reference spells this name with a single underscore after "history".
CREATE INDEX IF NOT EXISTS crypto_allowance_history_owner_spender_lower_timestamp
    ON crypto_allowance_history (owner, spender, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS crypto_allowance_history__timestamp_range
    ON crypto_allowance_history USING gist (timestamp_range);

CREATE INDEX IF NOT EXISTS token_allowance_history__owner_spender_token_lower_timestamp
    ON token_allowance_history (owner, spender, token_id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS token_allowance_history__timestamp_range
    ON token_allowance_history USING gist (timestamp_range);

CREATE INDEX IF NOT EXISTS nft_allowance__spender_owner_token
    ON nft_allowance (spender, owner, token_id);

CREATE INDEX IF NOT EXISTS nft_allowance_history__owner_spender_token_lower_timestamp
    ON nft_allowance_history (owner, spender, token_id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS nft_allowance_history__timestamp_range
    ON nft_allowance_history USING gist (timestamp_range);

-- nft ---------------------------------------------------------------------------

CREATE INDEX IF NOT EXISTS nft__account_token_serialnumber
    ON nft (account_id, token_id, serial_number);
CREATE INDEX IF NOT EXISTS nft__allowance
    ON nft (account_id, spender, token_id, serial_number)
    WHERE account_id IS NOT NULL AND spender IS NOT NULL;

CREATE INDEX IF NOT EXISTS nft_history__token_serial_lower_timestamp
    ON nft_history (token_id, serial_number, lower(timestamp_range));
-- Stands in for the reference's gist (account_id, timestamp_range), which needs btree_gist.
CREATE INDEX IF NOT EXISTS nft_history__account_lower_timestamp
    ON nft_history (account_id, lower(timestamp_range));

-- token_airdrop -----------------------------------------------------------------

CREATE INDEX IF NOT EXISTS token_airdrop__receiver_id
    ON token_airdrop (receiver_account_id, sender_account_id, token_id, serial_number);
CREATE UNIQUE INDEX IF NOT EXISTS token_airdrop__sender_id
    ON token_airdrop (sender_account_id, receiver_account_id, token_id, serial_number);

-- The reference gives this GiST index a btree-style name, kept here for compatibility.
CREATE INDEX IF NOT EXISTS token_airdrop_history__token_serial_lower_timestamp
    ON token_airdrop_history USING gist (timestamp_range);

-- staking -----------------------------------------------------------------------

CREATE INDEX IF NOT EXISTS staking_reward_transfer__account_timestamp
    ON staking_reward_transfer (account_id, consensus_timestamp);

CREATE INDEX IF NOT EXISTS entity_stake_history__id_lower_timestamp
    ON entity_stake_history (id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS entity_stake_history__timestamp_range
    ON entity_stake_history USING gist (timestamp_range);

-- custom_fee --------------------------------------------------------------------

-- The reference created this index when the key column was still called token_id and
-- kept the name after the column became entity_id. The name is kept here as well.
CREATE INDEX IF NOT EXISTS custom_fee_history__token_id_timestamp_range
    ON custom_fee_history (entity_id, lower(timestamp_range));
CREATE INDEX IF NOT EXISTS custom_fee_history__timestamp_range
    ON custom_fee_history USING gist (timestamp_range);

-- record_file -------------------------------------------------------------------

-- COLLATE "C" lets hash prefix searches (LIKE 'abc%') use the index.
CREATE INDEX IF NOT EXISTS record_file__hash
    ON record_file (hash COLLATE "C");
CREATE INDEX IF NOT EXISTS record_file__index
    ON record_file (index);

-- network -----------------------------------------------------------------------

CREATE INDEX IF NOT EXISTS address_book_entry__timestamp
    ON address_book_entry (consensus_timestamp);

CREATE INDEX IF NOT EXISTS address_book_service_endpoint__timestamp_node_id
    ON address_book_service_endpoint (consensus_timestamp, node_id);

CREATE INDEX IF NOT EXISTS node_history__node_id_lower_timestamp
    ON node_history (node_id, lower(timestamp_range));

CREATE INDEX IF NOT EXISTS node_stake__epoch_day
    ON node_stake (epoch_day);

CREATE INDEX IF NOT EXISTS file_data__id_timestamp
    ON file_data (entity_id, consensus_timestamp);

CREATE INDEX IF NOT EXISTS registered_node__type
    ON registered_node USING gin (type) WHERE deleted IS FALSE;

-- transactions ------------------------------------------------------------------

CREATE INDEX IF NOT EXISTS transaction__payer_account_id_consensus_ns
    ON transaction (payer_account_id, consensus_timestamp);
CREATE INDEX IF NOT EXISTS transaction__transaction_id
    ON transaction (valid_start_ns, payer_account_id);
CREATE INDEX IF NOT EXISTS transaction__type_consensus_timestamp
    ON transaction (type, consensus_timestamp);

CREATE INDEX IF NOT EXISTS crypto_transfer__consensus_timestamp
    ON crypto_transfer (consensus_timestamp);
-- 0.0.98 (the fee collection account) appears in almost every transaction and is left out.
CREATE INDEX IF NOT EXISTS crypto_transfer__entity_id_consensus_timestamp
    ON crypto_transfer (entity_id, consensus_timestamp) WHERE entity_id <> 98;

CREATE INDEX IF NOT EXISTS token_transfer__account_timestamp
    ON token_transfer (account_id, consensus_timestamp DESC);
CREATE INDEX IF NOT EXISTS token_transfer__token_account_timestamp
    ON token_transfer (consensus_timestamp DESC, token_id DESC, account_id DESC);

-- The reference uses a hash index on the same expression. A btree serves the same
-- equality lookups. Over a reference database the existing index (same name) is kept.
CREATE INDEX IF NOT EXISTS transaction_hash__hash
    ON transaction_hash (substring(hash FROM 1 FOR 32));

CREATE INDEX IF NOT EXISTS assessed_custom_fee__consensus_timestamp
    ON assessed_custom_fee (consensus_timestamp);

-- token.name trigram index ------------------------------------------------------

-- Needs pg_trgm. Create the extension and the index only when the server ships the
-- extension, otherwise do nothing. A role that may not create the extension also
-- skips the index, with a notice.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        EXECUTE 'CREATE INDEX IF NOT EXISTS token__name ON token USING gin (name gin_trgm_ops)';
    END IF;
EXCEPTION
    WHEN insufficient_privilege THEN
        RAISE NOTICE 'pg_trgm could not be created (%), token__name index skipped', SQLERRM;
END
$$;
