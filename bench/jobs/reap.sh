# The reap job of bench/run (sourced):
#
#   reap  reaping each of REAP_SIZES stale contenders (5 per lock):
#         `zklock reap --all --yes`, against bench/kazoo_reap.py (kazoo at
#         its best: listings in flight at once, deletes in transactions of
#         1,000 all committed at once), and bench/delete_floor.rs (list
#         the tree, delete everything in multi transactions without reading
#         a node, on zklock's client crate); each on a tree of its own,
#         filled afresh for every run (bench/populate.rs), REAP_RUNS
#         runs; medians and both ratios (goals: zklock >= 10 x as fast as
#         kazoo, >= 0.7 x the floor's speed)
#
# Needs $ZKLOCK, $POPULATE and $DELETE_FLOOR (bench/run builds them) and a
# server from bench_zk_start.

REAP_RUNS=${BENCH_REAP_RUNS:-${BENCH_RUNS:-5}}
REAP_SIZES=${BENCH_REAP_SIZES:-10000 100000}
REAP_CONTENDERS=5

# Fills ROOT with REAP_LOCKS x REAP_CONTENDERS contenders; sets $REAP_HOLDER
# to the process that holds them.
reap_fill() {
    local root=$1 out=$BENCH_TMP/reap.fill.${1//\//_}
    bench_background "$out" "$POPULATE" "$BENCH_HOSTS" "$root" "$REAP_LOCKS" "$REAP_CONTENDERS"
    REAP_HOLDER=$BENCH_PID
    bench_wait_line "$out" '^READY'
}

# Fills ROOT, times the reaper CMD... (its stdout to OUT), checks that
# nothing is left under ROOT; the wall time in seconds is $BENCH_SECONDS.
reap_once() {
    local root=$1 out=$2 left
    shift 2
    reap_fill "$root"
    bench_measure "$out" "$@"
    left=$("$ZKLOCK" -H "$BENCH_HOSTS" -q -o json ls "$root" |
        "$BENCH_PYTHON" -c 'import json, sys; print(sum(len(l["holders"]) + len(l["waiters"]) for l in json.load(sys.stdin)))')
    [[ $left == 0 ]] || bench_die "$* left $left contenders under $root"
    kill "$REAP_HOLDER" 2>/dev/null || true
}

# How many nodes a reaper's output says it deleted: zklock's JSON report,
# or the number the others print.
reap_count() {
    "$BENCH_PYTHON" -c '
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text)
print(len(doc["deleted"]) if isinstance(doc, dict) else doc)' "$1"
}

job_reap() {
    local size
    for size in $REAP_SIZES; do
        REAP_LOCKS=$((size / REAP_CONTENDERS)) reap_size
    done
}

# One reap row: REAP_LOCKS locks x REAP_CONTENDERS contenders.
reap_size() {
    local nodes=$((REAP_LOCKS * REAP_CONTENDERS)) zk=() kz=() fl=() i
    for ((i = 1; i <= REAP_RUNS; i++)); do
        reap_once "/bench/reap/$nodes/zklock-$i" "$BENCH_TMP/reap.zklock" \
            "$ZKLOCK" -H "$BENCH_HOSTS" -o json reap --all --yes "/bench/reap/$nodes/zklock-$i"
        zk+=("$BENCH_SECONDS")
        [[ $(reap_count "$BENCH_TMP/reap.zklock") == "$nodes" ]] || bench_die "zklock did not report $nodes deleted"
        reap_once "/bench/reap/$nodes/kazoo-$i" "$BENCH_TMP/reap.kazoo" \
            "$BENCH_PYTHON" "$BENCH_ROOT/bench/kazoo_reap.py" "$BENCH_HOSTS" "/bench/reap/$nodes/kazoo-$i"
        kz+=("$BENCH_SECONDS")
        [[ $(reap_count "$BENCH_TMP/reap.kazoo") == "$nodes" ]] || bench_die "kazoo did not delete $nodes"
        reap_once "/bench/reap/$nodes/floor-$i" "$BENCH_TMP/reap.floor" \
            "$DELETE_FLOOR" "$BENCH_HOSTS" "/bench/reap/$nodes/floor-$i"
        fl+=("$BENCH_SECONDS")
        [[ $(reap_count "$BENCH_TMP/reap.floor") == "$nodes" ]] || bench_die "the floor did not delete $nodes"
        bench_say "reap run $i: zklock ${zk[-1]} s, kazoo ${kz[-1]} s, floor ${fl[-1]} s"
    done
    local zkm kzm flm speedup of_floor
    zkm=$(bench_median "${zk[@]}")
    kzm=$(bench_median "${kz[@]}")
    flm=$(bench_median "${fl[@]}")
    speedup=$(awk -v a="$kzm" -v b="$zkm" 'BEGIN { printf "%.1f", a / b }')
    of_floor=$(awk -v a="$flm" -v b="$zkm" 'BEGIN { printf "%.2f", a / b }')
    bench_row "reap, $REAP_LOCKS locks x $REAP_CONTENDERS contenders, median of $REAP_RUNS" "$zkm s" \
        "$kzm s (pipelined, transactions)" "-" "-" "$flm s (multi-delete)" \
        "$speedup x kazoo's speed, $of_floor x the floor's" \
        ">= 10 x kazoo: $(awk -v r="$speedup" 'BEGIN { print (r >= 10 ? "met" : "MISSED") }'); >= 0.7 x floor: $(awk -v r="$of_floor" 'BEGIN { print (r >= 0.7 ? "met" : "MISSED") }')"
}
