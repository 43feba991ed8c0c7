# Wait-chain jobs of bench/run (sourced):
#
#   chains   time and peak memory of `deadlocks` over CHAINS_LOCKS locks x 2
#            contenders, against `ls` of the same tree, and of `stat -o json`
#            of one lock with CHAINS_WAITERS contenders, each waiter with its
#            chain; medians of RUNS runs (goal: linear in the waiters; peak
#            RSS of `deadlocks` within a few times `ls`'s)
#
# populate makes every contender on one session, so every lock's holder
# waits in every other lock: one possible cycle through all of them, the
# largest graph a tree of that size can make.

CHAINS_LOCKS=${BENCH_CHAINS_LOCKS:-10000}
CHAINS_WAITERS=${BENCH_CHAINS_WAITERS:-100000}

# Runs `zklock ARGS...` RUNS times, taking exit code OK (besides 0) for
# success: `deadlocks` exits 1 when it finds a cycle. Prints "<median s>
# <largest peak RSS in KB>".
chains_runs() {
    local ok=$1 result t r
    shift
    result=$("$BENCH_TIMER" --ok-exit "$ok" --out "$BENCH_TMP/chains.out" "$RUNS" \
        "$ZKLOCK" -H "$BENCH_HOSTS" "$@") || bench_die "failed: zklock $*"
    read -r t _ _ r <<<"$result"
    printf '%s %s\n' "$t" "$r"
}

job_chains() {
    local t r lt lr
    populate /bench/chains/tree "$CHAINS_LOCKS" 2
    read -r t r <<<"$(chains_runs 1 deadlocks /bench/chains/tree -o json)"
    read -r lt lr <<<"$(chains_runs 0 ls /bench/chains/tree -o json)"
    bench_row "deadlocks -o json, $CHAINS_LOCKS locks x 2, median of $RUNS" "$t s (peak $(mb "$r"))" \
        "-" "-" "-" "-" "ls: $lt s (peak $(mb "$lr"))" "linear; peak within a few x ls"
    populate /bench/chains/one 1 "$CHAINS_WAITERS"
    read -r t r <<<"$(chains_runs 0 stat /bench/chains/one/lock-000000 -o json)"
    bench_row "stat -o json with chains, $CHAINS_WAITERS contenders, median of $RUNS" \
        "$t s (peak $(mb "$r"))" "-" "-" "-" "-" "-" "linear in the waiters"
}
