# Lock jobs of bench/run (sourced): one uncontended lock-run-release as a
# whole process, handoffs per second under contention, the herd check, and
# start-up time.

LOCK_RUNS=${BENCH_LOCK_RUNS:-31}
HANDOFF_WORKERS=${BENCH_HANDOFF_WORKERS:-8}
HANDOFF_EACH=${BENCH_HANDOFF_EACH:-25}
HERD_RELEASES=${BENCH_HERD_RELEASES:-5}

# Prints the wall time of one run of CMD, in seconds.
time_once() {
    local start=$EPOCHREALTIME
    "$@" >/dev/null || bench_die "failed: $*"
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f\n", b - a }'
}

ms() { awk -v s="$1" 'BEGIN { printf "%.2f ms", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
verdict() { awk -v v="$1" -v limit="$2" -v op="$3" 'BEGIN {
    ok = (op == "<=") ? v <= limit : v >= limit
    print (ok ? "met" : "MISSED") }'; }

# One uncontended `zklock lock L -- true` as a whole process, against a kazoo
# script, a Curator program and the floor doing the same job; the four run
# in turn, LOCK_RUNS times, and each column is a median.
job_lock() {
    local zk=() kz=() cu=() fl=() i zkm kzm cum flm
    bench_mkdirs /bench/lock/zklock /bench/lock/kazoo /bench/lock/curator /bench/lock/floor
    for ((i = 1; i <= LOCK_RUNS; i++)); do
        zk+=("$(time_once "$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/lock/zklock -- true)")
        kz+=("$(time_once "$BENCH_PYTHON" "$BENCH_ROOT/bench/lock_kazoo.py" "$BENCH_HOSTS" /bench/lock/kazoo true)")
        cu+=("$(time_once java -cp "$BENCH_CLASSES:$BENCH_CURATOR_CP" LockCurator "$BENCH_HOSTS" /bench/lock/curator true)")
        fl+=("$(time_once "$FLOOR" "$BENCH_HOSTS" /bench/lock/floor true)")
    done
    zkm=$(bench_median "${zk[@]}")
    kzm=$(bench_median "${kz[@]}")
    cum=$(bench_median "${cu[@]}")
    flm=$(bench_median "${fl[@]}")
    local to_kazoo to_floor
    to_kazoo=$(ratio "$zkm" "$kzm")
    to_floor=$(ratio "$zkm" "$flm")
    bench_row "lock-run-release (whole process)" "$(ms "$zkm")" "$(ms "$kzm")" "$(ms "$cum")" "$(ms "$flm")" \
        "$to_kazoo x kazoo, $(ratio "$zkm" "$cum") x Curator, $to_floor x floor" \
        "<= 0.15 x kazoo: $(verdict "$to_kazoo" 0.15 "<="); <= 1.3 x floor: $(verdict "$to_floor" 1.3 "<=")"
}

# Handoffs per second: HANDOFF_WORKERS workers each run CMD HANDOFF_EACH
# times on one lock; prints completed runs per second.
handoffs_per_second() {
    local start=$EPOCHREALTIME pids=() w
    for ((w = 0; w < HANDOFF_WORKERS; w++)); do
        (for ((j = 0; j < HANDOFF_EACH; j++)); do "$@" >/dev/null || exit 1; done) &
        pids+=("$!")
    done
    for w in "${pids[@]}"; do wait "$w" || bench_die "a worker failed: $*"; done
    awk -v a="$start" -v b="$EPOCHREALTIME" -v n=$((HANDOFF_WORKERS * HANDOFF_EACH)) \
        'BEGIN { printf "%.1f\n", n / (b - a) }'
}

# The same job as job_lock, by HANDOFF_WORKERS processes contending for one
# lock at a time; and kazoo once more as a long-lived process per worker
# looping over Lock.acquire/release, the strongest kazoo can do.
job_handoff() {
    local zk kz kz_loop
    bench_mkdirs /bench/handoff/zklock /bench/handoff/kazoo /bench/handoff/kazoo-loop
    zk=$(handoffs_per_second "$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/handoff/zklock -- true)
    kz=$(handoffs_per_second "$BENCH_PYTHON" "$BENCH_ROOT/bench/lock_kazoo.py" "$BENCH_HOSTS" /bench/handoff/kazoo true)
    kz_loop=$(HANDOFF_EACH=1 handoffs_per_second "$BENCH_PYTHON" "$BENCH_ROOT/tests/peers/kazoo_peer.py" \
        "$BENCH_HOSTS" /bench/handoff/kazoo-loop mutex --hold-ms 0 --loops "$HANDOFF_EACH")
    kz_loop=$(awk -v v="$kz_loop" -v n="$HANDOFF_EACH" 'BEGIN { printf "%.1f", v * n }')
    local vs
    vs=$(ratio "$zk" "$kz")
    bench_row "handoffs/s, $HANDOFF_WORKERS processes" "$zk/s" "$kz/s (in-process loop: $kz_loop/s)" "-" "-" \
        "$vs x kazoo, $(ratio "$zk" "$kz_loop") x kazoo loop" ">= 3 x kazoo: $(verdict "$vs" 3 ">=")"
}

# Server requests per release with WAITERS zklock waiters queued: the
# packets the server received between a holder's release and the next
# waiter holding, median of HERD_RELEASES releases.
herd_requests() {
    local waiters=$1 lock=/bench/herd/$1 holder out counts=() i before after next
    out=$BENCH_TMP/herd.$waiters
    mkdir -p "$out"
    bench_background "$out/0" "$ZKLOCK" -H "$BENCH_HOSTS" --session-timeout 40s lock "$lock"
    holder=$BENCH_PID
    bench_wait_line "$out/0" '^/'
    local pids=("$holder")
    # One at a time, so the queue order is the start order.
    for ((i = 1; i <= waiters; i++)); do
        bench_background "$out/$i" "$ZKLOCK" -H "$BENCH_HOSTS" --session-timeout 40s lock "$lock"
        pids+=("$BENCH_PID")
        bench_wait_contenders "$lock" $((i + 1))
    done
    for ((i = 1; i <= HERD_RELEASES; i++)); do
        before=$(bench_mntr zk_packets_received)
        kill -TERM "${pids[i - 1]}"
        bench_wait_line "$out/$i" '^/'
        after=$(bench_mntr zk_packets_received)
        # One packet of each pair is the mntr request itself.
        counts+=($((after - before - 1)))
    done
    for i in "${pids[@]}"; do kill -TERM "$i" 2>/dev/null || true; done
    bench_median "${counts[@]}"
}

job_herd() {
    local few many
    few=$(herd_requests 10)
    many=$(herd_requests 100)
    bench_row "herd: server requests per release" "$few (10 waiters), $many (100 waiters)" "-" "-" "-" \
        "$(ratio "$many" "$few") (100 vs 10 waiters)" \
        "independent of waiters: $(awk -v a="$few" -v b="$many" 'BEGIN { print (b <= a + 1 ? "met" : "MISSED") }')"
}

# `zklock --help` start-up time, median of LOCK_RUNS runs, against `true`.
job_startup() {
    local zk=() tr=() i
    for ((i = 1; i <= LOCK_RUNS; i++)); do
        zk+=("$(time_once "$ZKLOCK" --help)")
        tr+=("$(time_once /bin/true)")
    done
    local zkm trm
    zkm=$(bench_median "${zk[@]}")
    trm=$(bench_median "${tr[@]}")
    bench_row "zklock --help start-up" "$(ms "$zkm")" "-" "-" "$(ms "$trm") (/bin/true)" \
        "$(ratio "$zkm" "$trm") x /bin/true" "-"
}
