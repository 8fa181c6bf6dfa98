-- 0001_types: domains and enum types used by the mirror schema.
--
-- Every statement is idempotent. PostgreSQL has no CREATE DOMAIN/TYPE IF NOT EXISTS,
-- so each one runs in its own DO block that ignores duplicate_object. That lets this
-- file run over a database that already holds the reference mirror schema.
--
-- Only the three domains that tables use are created. The legacy domains
-- entity_num, entity_realm_num and entity_type_id are unused and left out, and so are
-- the hook enums (hook_type, hook_extension_point).

-- Domains --------------------------------------------------------------------

-- Encoded entity id: shard (10 bits), realm (16 bits), num (38 bits) in one int64.
DO $$
BEGIN
    CREATE DOMAIN entity_id AS bigint;
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

-- Nanoseconds since the Unix epoch (UTC).
DO $$
BEGIN
    CREATE DOMAIN nanos_timestamp AS bigint;
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

-- An amount of hbar in tinybars.
DO $$
BEGIN
    CREATE DOMAIN hbar_tinybars AS bigint;
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

-- Enums ----------------------------------------------------------------------

DO $$
BEGIN
    CREATE TYPE entity_type AS ENUM (
        'UNKNOWN', 'ACCOUNT', 'CONTRACT', 'FILE', 'TOPIC', 'TOKEN', 'SCHEDULE'
    );
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE token_type AS ENUM ('FUNGIBLE_COMMON', 'NON_FUNGIBLE_UNIQUE');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE token_supply_type AS ENUM ('INFINITE', 'FINITE');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE token_pause_status AS ENUM ('NOT_APPLICABLE', 'PAUSED', 'UNPAUSED');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE airdrop_state AS ENUM ('CANCELLED', 'CLAIMED', 'PENDING');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE errata_type AS ENUM ('INSERT', 'DELETE');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;
