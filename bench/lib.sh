# Helpers shared by the benchmark scripts in bench/ (sourced, not run).
#
#   bench_init                  a temp dir ($BENCH_TMP); at exit, stops every
#                               process started through bench_background and
#                               removes the temp dir
#   bench_build ARGS...         cargo build --release ARGS (quietly)
#   bench_zk_start              a standalone ZooKeeper (Debian's package) on a
#                               free 127.0.0.1 port; sets $BENCH_HOSTS
#   bench_background OUT CMD... runs CMD in the background (stdout to OUT,
#                               stdin held open until exit); sets $BENCH_PID
#   bench_wait_line FILE RE     waits (60 s at most) until FILE has a line
#                               matching RE
#   bench_measure OUT CMD...    runs CMD (stdout to OUT); prints
#                               "<wall seconds> <max RSS in KB>"
#   bench_median N...           the median of numbers
#   bench_row COL...            adds a row to the table; bench_table prints it
#
# A job script sources this file, calls bench_init and bench_zk_start, runs
# its jobs (each adding rows) and ends with bench_table.

set -euo pipefail
shopt -s inherit_errexit

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Debian's interpreter: the one that sees python3-kazoo.
BENCH_PYTHON=/usr/bin/python3
BENCH_PIDS=()
BENCH_ROWS=()

bench_init() {
    BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/zklock-bench.XXXXXX")
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}

bench_cleanup() {
    local pid
    for pid in "${BENCH_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$BENCH_TMP"
}

bench_say() { printf 'bench: %s\n' "$*" >&2; }
bench_die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

bench_build() {
    (cd "$BENCH_ROOT" && cargo build --quiet --release "$@")
}

bench_free_port() {
    "$BENCH_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# True when ZooKeeper on 127.0.0.1:$1 answers `ruok` with `imok`.
bench_ruok() {
    local reply
    # shellcheck disable=SC2016 # $1 expands in the inner shell
    reply=$(timeout 3 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf ruok >&3
        IFS= read -r -t 2 reply <&3 || true
        printf %s "$reply"
    ' ruok "$1" 2>/dev/null) || return 1
    [[ $reply == imok ]]
}

bench_zk_start() {
    [[ -r /usr/share/java/zookeeper.jar ]] && command -v java >/dev/null ||
        bench_die "ZooKeeper is not installed: run scripts/setup"
    local dir=$BENCH_TMP/zookeeper port deadline=$((SECONDS + 60))
    port=$(bench_free_port)
    mkdir -p "$dir/data"
    # forceSync=no only speeds up filling the tree; the jobs measure reads.
    cat >"$dir/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
maxClientCnxns=0
forceSync=no
CFG
    java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar \
        org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
        >"$dir/zookeeper.log" 2>&1 &
    BENCH_PIDS+=("$!")
    until bench_ruok "$port"; do
        ((SECONDS < deadline)) || bench_die "ZooKeeper did not answer on port $port within 60 s"
        sleep 0.2
    done
    BENCH_HOSTS=127.0.0.1:$port
    bench_say "ZooKeeper on $BENCH_HOSTS"
}

bench_background() {
    local out=$1 hold
    shift
    hold=$BENCH_TMP/hold.$RANDOM$RANDOM
    mkfifo "$hold"
    # Opened read-write, so it never blocks and never sees EOF while we run.
    exec {BENCH_HOLD_FD}<>"$hold"
    "$@" <"$hold" >"$out" &
    BENCH_PID=$!
    BENCH_PIDS+=("$BENCH_PID")
}

bench_wait_line() {
    local file=$1 pattern=$2 deadline=$((SECONDS + 60))
    until grep -Eq "$pattern" "$file" 2>/dev/null; do
        ((SECONDS < deadline)) || bench_die "no line matching $pattern in $file within 60 s"
        sleep 0.1
    done
}

bench_measure() {
    local out=$1 start end
    shift
    start=$EPOCHREALTIME
    /usr/bin/time -f %M -o "$BENCH_TMP/rss" "$@" >"$out"
    end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" -v rss="$(<"$BENCH_TMP/rss")" \
        'BEGIN { printf "%.3f %d\n", b - a, rss }'
}

bench_median() {
    printf '%s\n' "$@" | sort -g | awk '
        { v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bench_row() {
    local IFS=$'\t'
    BENCH_ROWS+=("$*")
}

bench_table() {
    printf '%s\n' "${BENCH_ROWS[@]}" | column -t -s $'\t'
}

# bench_mkdirs PATH...: creates persistent directories (and their parents).
bench_mkdirs() {
    "$BENCH_PYTHON" - "$BENCH_HOSTS" "$@" <<'PY'
import logging, sys
from kazoo.client import KazooClient
logging.getLogger("kazoo").addHandler(logging.NullHandler())
client = KazooClient(hosts=sys.argv[1])
client.start()
for path in sys.argv[2:]:
    client.ensure_path(path)
client.stop()
PY
}

# bench_wait_contenders PATH N: waits (60 s at most) until PATH has N children.
bench_wait_contenders() {
    "$BENCH_PYTHON" - "$BENCH_HOSTS" "$1" "$2" <<'PY' || bench_die "$1 did not reach $2 contenders within 60 s"
import logging, sys, time
from kazoo.client import KazooClient
logging.getLogger("kazoo").addHandler(logging.NullHandler())
client = KazooClient(hosts=sys.argv[1])
client.start()
deadline = time.monotonic() + 60
while len(client.get_children(sys.argv[2])) < int(sys.argv[3]):
    if time.monotonic() > deadline:
        sys.exit(1)
    time.sleep(0.005)
client.stop()
PY
}

# bench_mntr KEY: the value of KEY in the server's `mntr` output.
bench_mntr() {
    local port=${BENCH_HOSTS##*:} reply
    exec {fd}<>"/dev/tcp/127.0.0.1/$port"
    printf mntr >&"$fd"
    reply=$(cat <&"$fd")
    exec {fd}<&-
    awk -v key="$1" '$1 == key { print $2 }' <<<"$reply"
}
