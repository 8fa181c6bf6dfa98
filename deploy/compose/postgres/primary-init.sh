#!/bin/sh
# The primary's first start (docker-entrypoint-initdb.d): a replication role for the standby, allowed in from
# the Compose network, and the API's read-only role with its password (`ledgermirror db migrate` grants it
# read access).
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
create role replicator with replication login password '$REPLICATION_PASSWORD';
create role mirror_api with login password '$API_PASSWORD';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
