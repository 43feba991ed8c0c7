# The watch job of bench/run (sourced):
#
#   watch  `zklock -o json watch` of one lock with WATCH_WAITERS waiters
#          while bench/churn_kazoo.py adds and removes waiters at
#          WATCH_RATE changes a second for WATCH_SECONDS seconds: the lag of
#          each change's event behind the moment the change was sent (p50,
#          p99, bench/watch_lag.py), how many changes it reported, and the
#          CPU zklock used, as a share of one core over the churn and the
#          time it took to catch up (goals: p99 <= 10 ms, <= 10% of a core,
#          every change reported)

WATCH_WAITERS=${BENCH_WATCH_WAITERS:-10000}
WATCH_RATE=${BENCH_WATCH_RATE:-200}
WATCH_SECONDS=${BENCH_WATCH_SECONDS:-20}

# CPU seconds (user + system) process PID has used so far.
cpu_seconds() {
    awk -v ticks="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / ticks }' "/proc/$1/stat"
}

job_watch() {
    local root=/bench/watch lock out=$BENCH_TMP/watch.events churn=$BENCH_TMP/watch.churn
    local watcher cpu0 cpu1 start end lag p50 p99 seen made
    lock=$root/lock-000000
    populate "$root" 1 "$WATCH_WAITERS"
    bench_background "$out" "$ZKLOCK" -H "$BENCH_HOSTS" -o json watch "$lock"
    watcher=$BENCH_PID
    bench_wait_line "$out" '"event":"watching"'
    cpu0=$(cpu_seconds "$watcher")
    start=$EPOCHREALTIME
    "$BENCH_PYTHON" "$BENCH_ROOT/bench/churn_kazoo.py" "$BENCH_HOSTS" "$lock" "$WATCH_RATE" "$WATCH_SECONDS" >"$churn" ||
        bench_die "the churn failed"
    lag=$("$BENCH_PYTHON" "$BENCH_ROOT/bench/watch_lag.py" "$churn" "$out" 60)
    end=$EPOCHREALTIME
    cpu1=$(cpu_seconds "$watcher")
    kill -TERM "$watcher"
    read -r p50 p99 seen made <<<"$lag"
    local share
    share=$(awk -v a="$cpu0" -v b="$cpu1" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", 100 * (b - a) / (e - s) }')
    bench_say "watch: lag p50 $p50 ms, p99 $p99 ms, $seen of $made changes, $share% of a core"
    bench_row "watch, 1 lock x $WATCH_WAITERS waiters, $WATCH_RATE changes/s for $WATCH_SECONDS s" \
        "lag p50 $p50 ms, p99 $p99 ms; $seen of $made changes reported; $share% of a core" "-" "-" "-" "-" "-" \
        "p99 <= 10 ms: $(verdict "$p99" 10 "<="); <= 10% of a core: $(verdict "$share" 10 "<="); every change: $([[ $seen == "$made" ]] && echo met || echo MISSED)"
}
