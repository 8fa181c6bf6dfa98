-- 0013_network_nodes: the latest address book of one file, for GET /api/v1/network/nodes.
--
-- The reference indexes address_book only on its primary key (start_consensus_timestamp), so finding the
-- newest book of file 0.0.101 walks back over every newer 0.0.102 book. This index answers it with one probe.
-- The other network queries are served by primary keys: node_stake (consensus_timestamp, node_id),
-- address_book_entry (consensus_timestamp, node_id), network_stake (consensus_timestamp), node (node_id),
-- entity (id), account_balance (account_id, consensus_timestamp), and the reference's
-- address_book_service_endpoint__timestamp_node_id.

CREATE INDEX IF NOT EXISTS address_book__file_id_start_consensus_timestamp
    ON address_book (file_id, start_consensus_timestamp);
