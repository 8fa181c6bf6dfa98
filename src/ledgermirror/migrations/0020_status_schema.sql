-- 0020_status_schema: the status service's own schema `status` (issue 7), beside the mirror's tables.
--
-- Incidents and scheduled maintenances share one table (kind = 'incident' | 'maintenance'), as they share one
-- shape on the wire. Ids are 12 lowercase characters from digits and consonants (the Statuspage id shape).
-- Every statement is idempotent so the file can run over an existing database.

CREATE SCHEMA IF NOT EXISTS status;

CREATE OR REPLACE FUNCTION status.new_id() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT string_agg(substr('0123456789bcdfghjklmnpqrstvwxyz', 1 + floor(random() * 31)::int, 1), '')
    FROM generate_series(1, 12)
$$;

-- The page itself: one row, made once; its id is stable for the life of the database.
CREATE TABLE IF NOT EXISTS status.page (
    singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    id         text        NOT NULL DEFAULT status.new_id(),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO status.page (singleton) VALUES (true) ON CONFLICT DO NOTHING;

-- Components and groups (groups are rows with is_group; a group's status is the worst of its children).
-- status_source says how the status is set: 'manual' (management API / CLI) or 'auto:<source>' for an
-- automatic evaluator added later; source_ref names what the source watches (e.g. a node id).
CREATE TABLE IF NOT EXISTS status.component (
    id                    text        PRIMARY KEY DEFAULT status.new_id(),
    name                  text        NOT NULL,
    description           text,
    is_group              boolean     NOT NULL DEFAULT false,
    group_id              text        REFERENCES status.component (id),
    position              integer     NOT NULL DEFAULT 1,
    status                text        NOT NULL DEFAULT 'operational' CHECK (status IN
                              ('operational', 'degraded_performance', 'partial_outage', 'major_outage',
                               'under_maintenance')),
    status_source         text        NOT NULL DEFAULT 'manual' CHECK (status_source ~ '^(manual|auto:[a-z0-9_.-]+)$'),
    source_ref            text,
    showcase              boolean     NOT NULL DEFAULT true,
    only_show_if_degraded boolean     NOT NULL DEFAULT false,
    start_date            date,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    CHECK (NOT (is_group AND group_id IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS component__group_id ON status.component (group_id);
CREATE UNIQUE INDEX IF NOT EXISTS component__source ON status.component (status_source, source_ref)
    WHERE source_ref IS NOT NULL;

-- Every change of a component's status, from which uptime is computed.
CREATE TABLE IF NOT EXISTS status.component_status_history (
    id           bigserial   PRIMARY KEY,
    component_id text        NOT NULL REFERENCES status.component (id),
    old_status   text,
    new_status   text        NOT NULL,
    changed_at   timestamptz NOT NULL,
    incident_id  text
);
CREATE INDEX IF NOT EXISTS component_status_history__component_changed
    ON status.component_status_history (component_id, changed_at);

-- Incidents and scheduled maintenances.
CREATE TABLE IF NOT EXISTS status.incident (
    id               text        PRIMARY KEY DEFAULT status.new_id(),
    kind             text        NOT NULL CHECK (kind IN ('incident', 'maintenance')),
    name             text        NOT NULL,
    status           text        NOT NULL CHECK (status IN
                         ('investigating', 'identified', 'monitoring', 'resolved', 'postmortem',
                          'scheduled', 'in_progress', 'verifying', 'completed')),
    impact           text        NOT NULL DEFAULT 'none' CHECK (impact IN
                         ('none', 'minor', 'major', 'critical', 'maintenance')),
    impact_override  text        CHECK (impact_override IN ('none', 'minor', 'major', 'critical', 'maintenance')),
    shortlink        text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    started_at       timestamptz NOT NULL,
    monitoring_at    timestamptz,
    resolved_at      timestamptz,
    scheduled_for    timestamptz,
    scheduled_until  timestamptz,
    auto_in_progress boolean     NOT NULL DEFAULT true,
    auto_completed   boolean     NOT NULL DEFAULT true,
    cancelled_at     timestamptz,
    CHECK (kind = 'incident' OR (scheduled_for IS NOT NULL AND scheduled_until IS NOT NULL
                                 AND scheduled_until >= scheduled_for))
);
CREATE INDEX IF NOT EXISTS incident__kind_created ON status.incident (kind, created_at DESC);
CREATE INDEX IF NOT EXISTS incident__unresolved ON status.incident (kind, status)
    WHERE status NOT IN ('resolved', 'postmortem', 'completed');

CREATE TABLE IF NOT EXISTS status.incident_update (
    id                    text        PRIMARY KEY DEFAULT status.new_id(),
    seq                   bigint      GENERATED ALWAYS AS IDENTITY,
    incident_id           text        NOT NULL REFERENCES status.incident (id),
    status                text        NOT NULL,
    body                  text        NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    display_at            timestamptz NOT NULL,
    affected_components   jsonb,
    deliver_notifications boolean     NOT NULL DEFAULT true
);
CREATE INDEX IF NOT EXISTS incident_update__incident ON status.incident_update (incident_id, display_at DESC);

-- The components an incident or maintenance affects.
CREATE TABLE IF NOT EXISTS status.incident_component (
    incident_id  text NOT NULL REFERENCES status.incident (id),
    component_id text NOT NULL REFERENCES status.component (id),
    PRIMARY KEY (incident_id, component_id)
);
CREATE INDEX IF NOT EXISTS incident_component__component ON status.incident_component (component_id);

-- Management API keys: only a SHA-256 of the secret is kept.
CREATE TABLE IF NOT EXISTS status.api_key (
    id          text        PRIMARY KEY DEFAULT status.new_id(),
    name        text        NOT NULL,
    secret_hash text        NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

-- Who changed what, when (append-only by convention; the management code only inserts).
CREATE TABLE IF NOT EXISTS status.audit_log (
    id          bigserial   PRIMARY KEY,
    at          timestamptz NOT NULL,
    actor       text        NOT NULL,
    action      text        NOT NULL,
    target_type text        NOT NULL,
    target_id   text,
    details     jsonb       NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX IF NOT EXISTS audit_log__at ON status.audit_log (at);
