# Wait-chain jobs of bench/run (sourced):
#
#   chains   time and peak memory of `deadlocks` over CHAINS_LOCKS locks x 2
#            contenders, against `ls` of the same tree, and of `stat -o json`
#            of one lock with CHAINS_WAITERS contenders, each waiter with its
#            chain; medians of RUNS runs (goal: linear in the waiters; peak
#            RSS of `deadlocks` within a few times `ls`'s); and, for a full
#            semaphore of CHAINS_LEASES leases and as many queued acquirers
#            in kazoo's and in Curator's layout, `deadlocks -o json` and the
#            exporter's peak RSS over CHAINS_SURVEYS seconds of cycle
#            searches, against `ls -o json` of the same tree (goal: both
#            within 2 x `ls`'s peak)
#
# populate makes every contender on one session, so every lock's holder
# waits in every other lock: one possible cycle through all of them, the
# largest graph a tree of that size can make.

CHAINS_LOCKS=${BENCH_CHAINS_LOCKS:-10000}
CHAINS_WAITERS=${BENCH_CHAINS_WAITERS:-100000}
CHAINS_LEASES=${BENCH_CHAINS_LEASES:-2000}
CHAINS_SURVEYS=${BENCH_CHAINS_SURVEYS:-3}

# Runs `zklock ARGS...` RUNS times, taking exit code OK (besides 0) for
# success: `deadlocks` exits 1 when it finds a cycle. Sets $CHAINS_SECONDS
# (the median) and $CHAINS_RSS (the largest peak RSS in KB).
chains_runs() {
    local ok=$1 lines
    shift
    bench_timer_lines lines --ok-exit "$ok" --out "$BENCH_TMP/chains.out" "$RUNS" \
        "$ZKLOCK" -H "$BENCH_HOSTS" "$@"
    read -r CHAINS_SECONDS _ _ CHAINS_RSS <<<"${lines[0]}"
}

job_chains() {
    local t r lt lr
    populate /bench/chains/tree "$CHAINS_LOCKS" 2
    chains_runs 1 deadlocks /bench/chains/tree -o json
    t=$CHAINS_SECONDS r=$CHAINS_RSS
    chains_runs 0 ls /bench/chains/tree -o json
    lt=$CHAINS_SECONDS lr=$CHAINS_RSS
    bench_row "deadlocks -o json, $CHAINS_LOCKS locks x 2, median of $RUNS" "$t s (peak $(mb "$r"))" \
        "-" "-" "-" "-" "ls: $lt s (peak $(mb "$lr"))" "linear; peak within a few x ls"
    populate /bench/chains/one 1 "$CHAINS_WAITERS"
    chains_runs 0 stat /bench/chains/one/lock-000000 -o json
    t=$CHAINS_SECONDS r=$CHAINS_RSS
    bench_row "stat -o json with chains, $CHAINS_WAITERS contenders, median of $RUNS" \
        "$t s (peak $(mb "$r"))" "-" "-" "-" "-" "-" "linear in the waiters"
    chains_semaphore kazoo-semaphore
    chains_semaphore curator-semaphore
}

# The exporter's peak RSS in KB (VmHWM) over its first search of ROOT for
# cycles and CHAINS_SURVEYS seconds more, searching once a second: sets
# $EXPORTER_PEAK.
exporter_peak() {
    local root=$1 out=$BENCH_TMP/chains.exporter port url pid deadline
    port=$(bench_free_port)
    url=http://127.0.0.1:$port/metrics
    bench_background "$out" "$ZKLOCK" -H "$BENCH_HOSTS" exporter "$root" \
        --listen "127.0.0.1:$port" --survey-interval 1s
    pid=$BENCH_PID
    deadline=$((SECONDS + 600))
    # The first search is done once the gauge counts the knot; the
    # searches after it come once a second.
    until "$BENCH_PYTHON" -c 'import sys, urllib.request; sys.exit(0 if b"zklock_deadlock_cycles{certain=\"false\"} 1" in urllib.request.urlopen(sys.argv[1], timeout=5).read() else 1)' \
        "$url" 2>/dev/null; do
        ((SECONDS < deadline)) || bench_die "the exporter found no knot under $root within 600 s"
        sleep 0.2
    done
    sleep "$CHAINS_SURVEYS"
    EXPORTER_PEAK=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
}

# `deadlocks`, `ls` and the exporter over one full semaphore in LAYOUT.
chains_semaphore() {
    local layout=$1 root=/bench/chains/$1 t r lt lr xr
    populate "$root" 1 "$CHAINS_LEASES" "$layout"
    chains_runs 1 deadlocks "$root" -o json
    t=$CHAINS_SECONDS r=$CHAINS_RSS
    chains_runs 0 ls "$root" -o json
    lt=$CHAINS_SECONDS lr=$CHAINS_RSS
    exporter_peak "$root"
    xr=$EXPORTER_PEAK
    local twice=$((2 * lr))
    bench_row "deadlocks -o json, exporter: $layout, $CHAINS_LEASES leases x $CHAINS_LEASES acquirers, median of $RUNS" \
        "$t s (peak $(mb "$r")); exporter peak $(mb "$xr")" "-" "-" "-" "-" "ls: $lt s (peak $(mb "$lr"))" \
        "peak <= 2 x ls: deadlocks $(verdict "$r" "$twice" "<="), exporter $(verdict "$xr" "$twice" "<=")"
}
