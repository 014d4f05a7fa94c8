#!/bin/sh
# Build-time seeding: start MariaDB, create magentodb + magentouser, seed, stop cleanly.
set -eu
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
/usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock --skip-networking &
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
FLUSH PRIVILEGES;
SQL
cd /opt/magento-replica && python3 seed.py schema.sql fixtures.json
mariadb-admin --socket=/run/mysqld/mysqld.sock shutdown
wait
