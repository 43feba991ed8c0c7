# Helpers shared by the benchmark scripts in bench/ (sourced, not run).
#
#   bench_init                  a temp dir ($BENCH_TMP); at exit, stops every
#                               process started through bench_background (the
#                               server last) and removes the temp dir
#   bench_build ARGS...         cargo build ARGS (quietly), in the profile
#                               $BENCH_PROFILE names (release, or debug for
#                               a smoke run)
#   bench_zk_start              a standalone ZooKeeper (Debian's package) on a
#                               free 127.0.0.1 port; sets $BENCH_HOSTS
#   bench_warm                  warms that server up (its JIT compiler) with
#                               some thousands of requests before any timing
#   bench_background OUT CMD... runs CMD in the background (stdout to OUT,
#                               stdin held open until exit); sets $BENCH_PID
#   bench_wait_line FILE RE     waits (60 s at most) until FILE has a line
#                               matching RE
#   bench_measure OUT CMD...    runs CMD once through the timer (stdout to
#                               OUT); sets $BENCH_SECONDS (wall) and
#                               $BENCH_RSS (max RSS in KB)
#   bench_proxy_start           a counting proxy in front of the server
#                               (bench/count_proxy.py); sets $BENCH_PROXY_HOSTS
#   bench_proxy_counts          its counts so far: "<bytes to the server>
#                               <bytes from it> <requests> <keep-alive
#                               requests> <keep-alive bytes from it>"
#   bench_median N...           the median of numbers
#   bench_row COL...            adds a row to the table; bench_table prints it
#
# A job script sources this file, calls bench_init and bench_zk_start, runs
# its jobs (each adding rows) and ends with bench_table.
#
# Whatever fails stops the whole run, with bench_die's message or set -e:
# so a helper that measures hands its figures back in variables, not on
# stdout to a command substitution (whose failure a `read <<<"$(...)"`
# would swallow, and whose background processes would escape
# bench_cleanup), and a timer's lines are read by number, never past
# their end.

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

# Stops the processes in the reverse order of their start, so the server
# goes last: a zklock told to stop deletes its node first, and with the
# server gone it would retry for as long as its session could live.
bench_cleanup() {
    local i pid
    for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${BENCH_PIDS[i]}
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$BENCH_TMP"
}

bench_say() { printf 'bench: %s\n' "$*" >&2; }
bench_die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

bench_build() {
    local profile=()
    [[ $BENCH_PROFILE == debug ]] || profile=(--profile "$BENCH_PROFILE")
    (cd "$BENCH_ROOT" && cargo build --quiet "${profile[@]}" "$@")
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
# Long sessions for the queued waiters of herd and drain: they ping once a
# third of their timeout, and those pings are not part of a handoff.
maxSessionTimeout=600000
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
    local out=$1 result
    shift
    result=$("$BENCH_TIMER" --out "$out" 1 "$@") || bench_die "failed: $*"
    read -r BENCH_SECONDS _ _ BENCH_RSS <<<"$result"
}

# bench_timer_lines ARRAY TIMER_ARGS...: runs the timer and puts its lines,
# one per command timed, into ARRAY; stops the run unless there is one for
# every command.
bench_timer_lines() {
    local -n bench_lines=$1
    local result commands=1 arg
    shift
    for arg in "$@"; do [[ $arg != ::: ]] || commands=$((commands + 1)); done
    result=$("$BENCH_TIMER" "$@") || bench_die "failed: $*"
    mapfile -t bench_lines <<<"$result"
    ((${#bench_lines[@]} == commands)) ||
        bench_die "the timer printed ${#bench_lines[@]} lines for $commands commands"
}

# Some thousands of requests of every kind the jobs send (connects, creates,
# listings, reads, deletes, closes), so that the server's JIT compiler has
# done its work before anything is timed: BENCH_WARM_LOCKS locks of 4
# contenders listed, BENCH_WARM_ROUNDS lock-run-releases.
bench_warm() {
    local out=$BENCH_TMP/warm
    bench_say "warming the server up"
    bench_background "$out" "$POPULATE" "$BENCH_HOSTS" /bench/warm "${BENCH_WARM_LOCKS:-1000}" 4
    local holder=$BENCH_PID
    bench_wait_line "$out" '^READY'
    "$ZKLOCK" -H "$BENCH_HOSTS" -q -o json ls /bench/warm >/dev/null
    # Its nodes stay until its session expires; they are out of every job's way.
    kill "$holder"
    bench_mkdirs /bench/warm-lock
    "$BENCH_TIMER" --warmup "${BENCH_WARM_ROUNDS:-200}" 1 "$WIRE_FLOOR" "$BENCH_HOSTS" /bench/warm-lock true \
        ::: "$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/warm-lock -- true >/dev/null
}

bench_proxy_start() {
    local out=$BENCH_TMP/proxy.out
    BENCH_PROXY_STATS=$BENCH_TMP/proxy.stats
    bench_background "$out" "$BENCH_PYTHON" "$BENCH_ROOT/bench/count_proxy.py" \
        "${BENCH_HOSTS##*:}" "$BENCH_PROXY_STATS"
    BENCH_PROXY_PID=$BENCH_PID
    bench_wait_line "$out" '^PORT '
    BENCH_PROXY_HOSTS=127.0.0.1:$(awk '{ print $2 }' "$out")
}

bench_proxy_counts() {
    local deadline=$((SECONDS + 10))
    rm -f "$BENCH_PROXY_STATS"
    kill -USR1 "$BENCH_PROXY_PID"
    until [[ -s $BENCH_PROXY_STATS ]]; do
        ((SECONDS < deadline)) || bench_die "the counting proxy did not answer"
        sleep 0.01
    done
    cat "$BENCH_PROXY_STATS"
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
