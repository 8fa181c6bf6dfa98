-- 0024_hooks: HIP-1195 hooks as in the reference schema: the hooks of accounts and contracts (with history),
-- their storage slots, and every change of a slot.

DO $$
BEGIN
    CREATE TYPE hook_extension_point AS ENUM ('ACCOUNT_ALLOWANCE_HOOK');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE TYPE hook_type AS ENUM ('EVM');
EXCEPTION
    WHEN duplicate_object THEN NULL;
END
$$;

CREATE TABLE IF NOT EXISTS hook (
    contract_id       bigint,
    created_timestamp bigint,
    hook_id           bigint               NOT NULL,
    owner_id          bigint               NOT NULL,
    timestamp_range   int8range,
    extension_point   hook_extension_point NOT NULL DEFAULT 'ACCOUNT_ALLOWANCE_HOOK',
    deleted           boolean              NOT NULL DEFAULT false,
    admin_key         bytea,
    type              hook_type            NOT NULL DEFAULT 'EVM',
    PRIMARY KEY (owner_id, hook_id)
);

CREATE TABLE IF NOT EXISTS hook_history (LIKE hook INCLUDING DEFAULTS);

CREATE TABLE IF NOT EXISTS hook_storage (
    created_timestamp  bigint  NOT NULL,
    hook_id            bigint  NOT NULL,
    modified_timestamp bigint  NOT NULL,
    owner_id           bigint  NOT NULL,
    key                bytea   NOT NULL,
    value              bytea   NOT NULL,
    deleted            boolean NOT NULL DEFAULT false,
    PRIMARY KEY (owner_id, hook_id, key)
);

CREATE TABLE IF NOT EXISTS hook_storage_change (
    consensus_timestamp bigint  NOT NULL,
    hook_id             bigint  NOT NULL,
    owner_id            bigint  NOT NULL,
    key                 bytea   NOT NULL,
    value_read          bytea   NOT NULL,
    value_written       bytea,
    deleted             boolean NOT NULL DEFAULT false,
    PRIMARY KEY (owner_id, hook_id, key, consensus_timestamp)
);
