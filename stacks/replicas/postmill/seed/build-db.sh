#!/bin/sh
# Build-time: create the cluster, schema and seed, then stop PostgreSQL cleanly so the image
# layer holds the golden state. Args come from the Dockerfile (SEED, SCALE).
set -eu
PGBIN=/usr/lib/postgresql/15/bin
DATA=/usr/local/pgsql/data
mkdir -p "$DATA" /var/run/postgresql
chown -R postgres:postgres /usr/local/pgsql /var/run/postgresql
# The real image's entrypoint re-initialises PostgreSQL unless this marker exists
# (research/real-images.md §1.1); the image carries it as the real one does.
touch /var/run/postgresql/.init
chpst -u postgres $PGBIN/initdb -D "$DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=scram-sha-256 >/dev/null
cat >> "$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '/var/run/postgresql'
shared_buffers = 64MB
fsync = on
timezone = 'UTC'
log_timezone = 'UTC'
CONF
# SCALE=full: build-run-only server options (nothing is written to the config): no fsync/full-page
# writes, minimal WAL, small WAL size so pg_wal stays small in the image layer.
BUILD_OPTS=""
if [ "$2" = full ]; then
  BUILD_OPTS="-c fsync=off -c full_page_writes=off -c synchronous_commit=off -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=96MB -c min_wal_size=32MB -c checkpoint_timeout=1h -c maintenance_work_mem=256MB -c dynamic_shared_memory_type=mmap"
fi
chpst -u postgres $PGBIN/pg_ctl -D "$DATA" -w -t 60 -l /tmp/pg-build.log ${BUILD_OPTS:+-o "$BUILD_OPTS"} start
psql -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
     -c "CREATE ROLE postmill LOGIN PASSWORD 'postmill'" \
     -c "CREATE DATABASE postmill OWNER postmill ENCODING 'UTF8'"
# Postmill's own structure: every up() of its 112 Doctrine migrations in order (30 tables, 50
# foreign keys, the search triggers, doctrine_migration_versions filled), put into the build
# context from ../shared/data/schemas/ by sitectl (stacks/mini.yaml, images[].files); run as the
# application's role, as Postmill's bin/console doctrine:migrations:migrate does.
DUMP=/opt/postmill-replica/real/postmill-migrations.sql
echo "65af2dd373226c0727b0578f464b137a71787a9b7cfae877c2f7b2c78c32c762  $DUMP" | sha256sum -c --quiet
psql -U postmill -d postmill -v ON_ERROR_STOP=1 -q -f "$DUMP" >/dev/null
SEED="$1" SCALE="$2" python3 /opt/postmill-replica/seed/seed.py
psql -U postmill -d postmill -q -c "VACUUM ANALYZE"
if [ "$2" = full ]; then psql -U postgres -d postmill -q -c "CHECKPOINT" -c "CHECKPOINT"; fi
chpst -u postgres $PGBIN/pg_ctl -D "$DATA" -w -t 60 -m fast stop
rm -rf /tmp/pg-build.log /tmp/postmill-full-*
