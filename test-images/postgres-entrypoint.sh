#!/bin/sh
# The `postgres` test image's command: makes a cluster in $PGDATA on first start (trust
# authentication: only the session's own network namespace can reach it), then runs the
# server, as the postgres user when started as root, listening on loopback only unless
# LISTEN_ADDRESSES says otherwise (a bench's plain-network baseline).
set -eu
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
export PGDATA
bin=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
as_postgres=""
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  as_postgres="setpriv --reuid=postgres --regid=postgres --init-groups"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # shellcheck disable=SC2086 # empty, or the setpriv words
  $as_postgres "$bin/initdb" -D "$PGDATA" -U postgres --auth=trust >/dev/null
fi
if [ "${LISTEN_ADDRESSES:-localhost}" != localhost ] && ! grep -q '^host all all all trust' "$PGDATA/pg_hba.conf"; then
  echo 'host all all all trust' >>"$PGDATA/pg_hba.conf"
fi
# shellcheck disable=SC2086
exec $as_postgres "$bin/postgres" -D "$PGDATA" -c "listen_addresses=${LISTEN_ADDRESSES:-localhost}" \
  -c unix_socket_directories=/var/run/postgresql
