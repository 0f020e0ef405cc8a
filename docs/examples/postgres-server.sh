# A throwaway PostgreSQL server for trying the pages that show a shared store
# (teams.md): source it (`. docs/examples/postgres-server.sh`) in a shell of your own.
#
# It makes a new cluster in a fresh folder under /tmp, owned by the `postgres` system
# user when run as root (initdb refuses root), and starts it listening on localhost,
# port 5432, as the pages assume: the superuser `postgres` may connect from localhost
# without a password, every other role with its password (SCRAM). Durability is traded
# for speed (fsync=off): it holds nothing but examples. When the process that sourced
# this script's shell ends, a watchdog stops the server and removes its folder.
#
# The server binaries come from the system's packages (Debian keeps them in
# /usr/lib/postgresql/VERSION/bin).
__pg_ctl=$(command -v pg_ctl || ls -d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -1)
if [ -z "$__pg_ctl" ] || [ ! -x "$(dirname "$__pg_ctl")/initdb" ]; then
    echo "no PostgreSQL server (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin" >&2
    return 77 2>/dev/null || exit 77
fi
set -e
__pg_bin=$(dirname "$__pg_ctl")
__pg_folder=$(mktemp -d /tmp/kidx-postgres.XXXXXX)
if [ "$(id -u)" = 0 ]; then
    __pg_as="$(command -v runuser || echo /usr/sbin/runuser) -u postgres --"
    chown postgres "$__pg_folder"
else
    __pg_as=
fi
__pg_owner=$PPID
# a server this script started earlier for the same process is stopped first
for __pg_old in /tmp/kidx-postgres.*; do
    if [ "$(cat "$__pg_old/owner" 2>/dev/null)" = "$__pg_owner" ]; then
        $__pg_as "$__pg_bin/pg_ctl" -D "$__pg_old/data" -m immediate -w stop > /dev/null 2>&1 || true
        rm -rf "$__pg_old"
    fi
done
echo "$__pg_owner" > "$__pg_folder/owner"
# another such server may still be stopping: wait (at most 60 s) for the port
for __pg_i in $(seq 600); do
    (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null || break
    sleep 0.1
done
$__pg_as "$__pg_bin/initdb" -D "$__pg_folder/data" -U postgres -E UTF8 --locale=C > "$__pg_folder/initdb.log" 2>&1
cat > "$__pg_folder/data/pg_hba.conf" <<HBA
local all all                   trust
host  all postgres 127.0.0.1/32 trust
host  all postgres ::1/128      trust
host  all all      127.0.0.1/32 scram-sha-256
host  all all      ::1/128      scram-sha-256
HBA
$__pg_as "$__pg_bin/pg_ctl" -D "$__pg_folder/data" -l "$__pg_folder/server.log" -w \
    -o "-c listen_addresses=localhost -c port=5432 -c unix_socket_directories=$__pg_folder -c fsync=off" \
    start > /dev/null
# the watchdog: stop the server once the process that started this shell is gone
nohup sh -c "while kill -0 $__pg_owner 2>/dev/null && [ -d '$__pg_folder/data' ]; do sleep 1; done;
    $__pg_as '$__pg_bin/pg_ctl' -D '$__pg_folder/data' -m immediate -w stop; rm -rf '$__pg_folder'" \
    > /dev/null 2>&1 &
unset __pg_i __pg_as __pg_owner __pg_old __pg_ctl
set +e
