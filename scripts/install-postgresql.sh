#!/bin/sh
# Install Debian's PostgreSQL server for the archive tests and the archive soak, which start
# their own throw-away cluster on loopback (table_controller/soak/postgres_server.py); the
# packaged cluster is stopped, not used. Idempotent; run as root on Debian.
set -eu
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "install-postgresql: apt-get install postgresql"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
id postgres >/dev/null 2>&1 || { echo "install-postgresql: no postgres account" >&2; exit 1; }
echo "install-postgresql: ok ($(ls -d /usr/lib/postgresql/*/bin | tail -1))"
