#!/bin/sh
# A streaming standby of the primary: on first start, a base backup with -R (standby.signal and
# primary_conninfo), then PostgreSQL in hot standby.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -h "$PRIMARY_HOST" -p 5432; do sleep 1; done
  export PGPASSWORD="$REPLICATION_PASSWORD"
  pg_basebackup -h "$PRIMARY_HOST" -p 5432 -U replicator -D "$PGDATA" -R -X stream
  chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c wal_receiver_status_interval=1s
