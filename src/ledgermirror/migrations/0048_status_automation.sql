-- 0048_status_automation: what the status service's evaluator needs beside 0020 (ours).
--
-- component.deleted_at: deleted through the Statuspage v1 API (hidden for good; its history is kept).
-- component.hidden: kept out of the public page and JSON (an operator's choice, or a node that left the address
-- book: retired_at says when); component.auto_name: the name the evaluator last gave (an operator's rename,
-- name <> auto_name, is kept); component.rules: per-component overrides of the evaluator's thresholds;
-- component.auto_reason / auto_evidence: why the evaluator set the current status, in words and as data.
-- component_status_history.reason / evidence: the same for every automatic change.
-- incident.source / source_ref: who opened an incident or maintenance ('manual', 'auto:rule', 'auto:freeze')
-- and what it follows (a component id, a freeze transaction's consensus timestamp).

ALTER TABLE status.component ADD COLUMN IF NOT EXISTS hidden boolean NOT NULL DEFAULT false;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS retired_at timestamptz;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS auto_name text;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS rules jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS auto_reason text;
ALTER TABLE status.component ADD COLUMN IF NOT EXISTS auto_evidence jsonb;

ALTER TABLE status.component_status_history ADD COLUMN IF NOT EXISTS reason text;
ALTER TABLE status.component_status_history ADD COLUMN IF NOT EXISTS evidence jsonb;

ALTER TABLE status.incident ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT 'manual'
    CHECK (source ~ '^(manual|auto:[a-z0-9_.-]+)$');
ALTER TABLE status.incident ADD COLUMN IF NOT EXISTS source_ref text;
CREATE UNIQUE INDEX IF NOT EXISTS incident__open_auto ON status.incident (source, source_ref)
    WHERE source <> 'manual' AND status IN ('investigating', 'identified', 'monitoring', 'scheduled',
                                             'in_progress', 'verifying');
