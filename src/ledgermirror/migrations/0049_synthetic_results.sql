-- 0049_synthetic_results: the access paths of the synthetic contract results (contract_results.plan): the newest
-- (or oldest) transactions with synthetic contract logs, of every contract and of one, without reading the
-- logs that are not synthetic (most of contract_log). Partial: only synthetic rows are indexed.

CREATE INDEX IF NOT EXISTS contract_log__synthetic_timestamp
    ON contract_log (consensus_timestamp DESC, index) WHERE synthetic IS TRUE;

CREATE INDEX IF NOT EXISTS contract_log__synthetic_contract_timestamp
    ON contract_log (coalesce(root_contract_id, contract_id), consensus_timestamp DESC, index)
    WHERE synthetic IS TRUE;
