#!/bin/bash
# The official mysql image's entrypoint, as the classifieds contract needs it
# (docs/contracts/classifieds.md): first start on an empty data folder initialises the server,
# sets root's password (root@localhost and root@'%'), creates MYSQL_DATABASE and runs the init
# scripts in sorted order (*.sh sourced, *.sql piped into the database); any failure stops the
# container. Later starts find the data folder and go straight to the server.
set -eo pipefail
if [ "$1" != "mysqld" ]; then exec "$@"; fi
DATADIR=/var/lib/mysql
log() { printf '%s [Note] [Entrypoint]: %s\n' "$(date -u +%FT%TZ)" "$*"; }
if [ ! -d "$DATADIR/mysql" ]; then
  [ -n "$MYSQL_ROOT_PASSWORD" ] || { log "MYSQL_ROOT_PASSWORD is not set" >&2; exit 1; }
  log "Initializing database files"
  mysqld --initialize-insecure --user=mysql
  log "Starting temporary server"
  mysqld --user=mysql --skip-networking --socket=/var/run/mysqld/mysqld.sock &
  pid=$!
  for _ in $(seq 60); do mysql -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
  mysql -uroot <<SQL
SET @@SESSION.SQL_LOG_BIN=0;
CREATE USER 'root'@'%' IDENTIFIED BY '${MYSQL_ROOT_PASSWORD}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
ALTER USER 'root'@'localhost' IDENTIFIED BY '${MYSQL_ROOT_PASSWORD}';
SQL
  if [ -n "$MYSQL_DATABASE" ]; then
    log "Creating database ${MYSQL_DATABASE}"
    mysql -uroot -p"$MYSQL_ROOT_PASSWORD" -e "CREATE DATABASE IF NOT EXISTS \`${MYSQL_DATABASE}\`"
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) log "running $f"; . "$f" ;;
      *.sql) log "running $f"; mysql -uroot -p"$MYSQL_ROOT_PASSWORD" ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} < "$f" ;;
      *) log "ignoring $f" ;;
    esac
  done
  log "Stopping temporary server"
  kill "$pid"; wait "$pid" || true
  log "MySQL init process done. Ready for start up."
fi
exec mysqld --user=mysql
