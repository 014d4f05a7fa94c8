#!/bin/sh
# Build-time seeding: start MariaDB, create magentodb + magentouser, seed, stop cleanly.
set -eu
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
# The real images' entrypoint (adhocore/docker-lemp) re-initialises MariaDB unless this marker
# exists (research/real-images.md §1.1); the image carries it as theirs do.
touch /run/mysqld/.init
# SCALE=full bulk-loads millions of rows (the storefront's 300,000 reviews alone are ~1.5M): a bigger buffer pool and no per-commit flush/doublewrite while seeding
# (build-time only; the image's server runs with the defaults and is shut down cleanly below).
EXTRA=""
if [ "${SCALE:-tiny}" = full ]; then
  EXTRA="--innodb-buffer-pool-size=1G --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --local-infile=1"
fi
/usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock --skip-networking $EXTRA &
i=0
until mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1; do
  i=$((i+1)); [ $i -lt 300 ] || { echo "mariadb did not start" >&2; exit 1; }; sleep 0.1
done
mariadb --socket=/run/mysqld/mysqld.sock <<SQL
CREATE DATABASE magentodb CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE USER 'magentouser'@'localhost' IDENTIFIED BY 'MyPassword';
CREATE USER 'magentouser'@'127.0.0.1' IDENTIFIED BY 'MyPassword';
CREATE USER 'magentouser'@'%' IDENTIFIED BY 'MyPassword';
GRANT ALL PRIVILEGES ON magentodb.* TO 'magentouser'@'localhost', 'magentouser'@'127.0.0.1', 'magentouser'@'%';
-- The real images' root password (adhocore's default, research/real-images.md §1.2). Unlike
-- them, root also keeps socket authentication (docs/contracts.md lists the difference).
ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('1234567890');
FLUSH PRIVILEGES;
SQL
# Magento 2.4.8's own structure: its install dump (361 tables, 380 foreign keys, 66 indexer
# triggers, install rows with id 0), put into the build context from ../shared/data/schemas/ by
# sitectl (stacks/mini.yaml, images[].files). Its triggers' definer is the dump's `magento`;
# here the account Magento (the replica's app and bin/magento) connects as, magentouser@localhost.
DUMP=/opt/magento-replica/real/magento-2.4.8-install.sql
echo "5129b2405307da48c824afcfba963375b7249e2352365318a6c2b01111f220e2  $DUMP" | sha256sum -c --quiet
sed 's/DEFINER=`magento`@`%`/DEFINER=`magentouser`@`localhost`/' "$DUMP" | mariadb --socket=/run/mysqld/mysqld.sock magentodb
T0=$(date +%s)
cd /opt/magento-replica && python3 seed.py replica-indexes.sql fixtures.json
echo "seed step: $(( $(date +%s) - T0 ))s (SCALE=${SCALE:-tiny})"
mariadb-admin --socket=/run/mysqld/mysqld.sock shutdown
wait
