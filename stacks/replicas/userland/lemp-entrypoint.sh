#!/bin/sh
# The first-boot logic of the entrypoint of WebArena's Alpine images (the Magento pair and the
# forum are commits of adhocore/lemp:8.1; research/real-images.md §1.1, adhocore/docker-lemp's
# docker-entrypoint.sh): each database server is initialised again, against the data the image
# already holds, unless its marker in /run exists; then the marker is written and the image's
# command runs. A container that starts with a fresh /run (a tmpfs or emptyDir there, as some
# Swarm and Kubernetes definitions give) goes through this on every start; the image's own /run
# carries both markers. Written for this replica from that description: the steps that touch the
# databases, in the same order, with the same SQL and defaults (MYSQL_ROOT_PASSWORD and PGSQL_ROOT_PASSWORD
# 1234567890, MYSQL_PASSWORD 123456, no MYSQL_USER, PGSQL_DATABASE test); no `set -e`, so a
# failing step is passed over as there. With no MYSQL_USER, its GRANTs make anonymous accounts
# (''@localhost, ''@127.0.0.1, ''@::1) that its DELETE removes again, with every other account
# whose Password is empty (MariaDB 10.4 and later let it through the view mysql.user). Only the server this image runs
# (a runit service of that name) is initialised: Debian's packages put the other's files in place,
# the real images' other server has no data. Not reproduced: the DISABLE= knob (which services supervisord starts), the refusal of
# MYSQL_USER=root and PGSQL_USER=postgres, and the my.cnf edit for skip-networking.
MYSQL_ROOT_PASSWORD=${MYSQL_ROOT_PASSWORD:-1234567890}
MYSQL_PASSWORD=${MYSQL_PASSWORD:-123456}
PGSQL_ROOT_PASSWORD=${PGSQL_ROOT_PASSWORD:-1234567890}

if [ -d /etc/service/mariadb ] && [ ! -f /run/mysqld/.init ]; then
  echo "entrypoint: /run/mysqld/.init is missing: initialising MariaDB in /var/lib/mysql" >&2
  mkdir -p /run/mysqld /var/lib/mysql
  chown mysql:mysql -R /run/mysqld /var/lib/mysql
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql >&2
  SQL=$(mktemp)
  if [ -n "${MYSQL_DATABASE:-}" ]; then
    echo "CREATE DATABASE IF NOT EXISTS $MYSQL_DATABASE CHARACTER SET utf8 COLLATE utf8_general_ci;" >> "$SQL"
  fi
  MYSQL_DATABASE=${MYSQL_DATABASE:-*}
  for h in localhost 127.0.0.1 ::1; do
    echo "GRANT ALL ON $MYSQL_DATABASE.* to '${MYSQL_USER:-}'@'$h' IDENTIFIED BY '$MYSQL_PASSWORD';" >> "$SQL"
  done
  echo "ALTER user 'root'@'localhost' IDENTIFIED BY '$MYSQL_ROOT_PASSWORD';" >> "$SQL"
  echo "DELETE FROM mysql.user WHERE User = '' OR Password = '';" >> "$SQL"
  echo "FLUSH PRIVILEGES;" >> "$SQL"
  mariadbd --user=mysql --bootstrap --silent-startup --skip-grant-tables=FALSE < "$SQL" >&2
  rm -f "$SQL"
  touch /run/mysqld/.init
fi

if [ -d /etc/service/postgres ] && [ ! -f /run/postgresql/.init ]; then
  echo "entrypoint: /run/postgresql/.init is missing: initialising PostgreSQL in /usr/local/pgsql/data" >&2
  PGBIN=/usr/lib/postgresql/15/bin
  D=/usr/local/pgsql/data
  SQL=$(mktemp)
  mkdir -p /run/postgresql "$D"
  chown postgres:postgres -R /run/postgresql "$D" "$SQL"
  chpst -u postgres "$PGBIN/initdb" -D "$D" >&2
  PGSQL_DATABASE=${PGSQL_DATABASE:-test}
  echo "CREATE DATABASE $PGSQL_DATABASE;" >> "$SQL"
  echo "ALTER USER postgres PASSWORD '$PGSQL_ROOT_PASSWORD';" >> "$SQL"
  echo "GRANT ALL PRIVILEGES ON DATABASE $PGSQL_DATABASE TO postgres;" >> "$SQL"
  # A pid file left by a killed container of this image is stale (the run script says why).
  rm -f "$D/postmaster.pid"
  chpst -u postgres "$PGBIN/pg_ctl" -D "$D" -o "-c listen_addresses='' -p ${PGSQL_PORT:-5432}" -w start >&2
  chpst -u postgres "$PGBIN/psql" -U postgres -d postgres -f "$SQL" >&2
  rm -f "$SQL"
  chpst -u postgres "$PGBIN/pg_ctl" -D "$D" -m fast -w stop >&2
  # host lines that trust become password lines; the socket's local lines keep trust.
  sed -i -E 's/^host([[:space:]]+all.*)trust/host\1password/' "$D/pg_hba.conf"
  touch /run/postgresql/.init
fi

exec "$@"
