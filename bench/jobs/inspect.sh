# Inspection jobs of bench/run (sourced):
#
#   ls       `zklock ls` over LS_LOCKS locks x LS_CONTENDERS contenders,
#            against bench/kazoo_ls.py doing the same job with kazoo at its
#            best (every read and listing of a tree level in flight at
#            once); medians of RUNS runs, and the ratio (goal: zklock <= 0.1
#            x kazoo)
#   inspect  time and peak memory of `ls`, `stat` and `dump`, as a table
#            and as JSON, over each of INSPECT_SIZES contenders: `ls` and
#            `dump` over SIZE / 5 locks x 5 contenders, `stat` of one lock
#            with SIZE contenders; median time and largest peak RSS of RUNS
#            runs (goal: peak RSS flat in the number of contenders: under
#            40 MB for `ls` and `dump`, under 100 MB for `stat` of a lock
#            with 100,000 contenders)
#
# The contenders are ephemeral-sequential nodes named as Curator names them,
# each holding a zklock owner record (bench/populate.rs).

RUNS=${BENCH_RUNS:-5}
LS_LOCKS=${BENCH_LS_LOCKS:-2000}
LS_CONTENDERS=${BENCH_LS_CONTENDERS:-5}
INSPECT_SIZES=${BENCH_INSPECT_SIZES:-10000 100000}

# Fills ROOT with LOCKS x CONTENDERS contenders, held until the script ends;
# a fourth argument is populate's LAYOUT (bench/populate.rs).
populate() {
    local root=$1 locks=$2 contenders=$3 out
    out=$BENCH_TMP/populate.$locks.$contenders.$RANDOM
    bench_say "creating $locks locks x $contenders contenders under $root ${4:-}"
    bench_background "$out" "$POPULATE" "$BENCH_HOSTS" "$root" "$locks" "$contenders" "${@:4}"
    bench_wait_line "$out" '^READY'
}

# How many locks, and contenders, a JSON file of locks (ls), a lock (stat)
# or a dump holds.
count_locks() {
    "$BENCH_PYTHON" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
locks = doc["locks"] if isinstance(doc, dict) and "locks" in doc else doc
locks = [locks] if isinstance(locks, dict) else locks
print(len(locks), sum(len(l["holders"]) + len(l["waiters"]) for l in locks))' "$1"
}

# Checks that a run found every lock and contender.
expect_counts() {
    local file=$1 locks=$2 contenders=$3 found
    found=$(count_locks "$file")
    [[ $found == "$locks $((locks * contenders))" ]] ||
        bench_die "$file: expected $locks locks and $((locks * contenders)) contenders, found $found"
}

mb() { awk -v kb="$1" 'BEGIN { printf "%.1f MB", kb / 1024 }'; }

job_ls() {
    local root=/bench/ls zklock_times=() kazoo_times=() rss=0 i zk kz ratio verdict
    populate "$root" "$LS_LOCKS" "$LS_CONTENDERS"
    for ((i = 1; i <= RUNS; i++)); do
        bench_measure "$BENCH_TMP/ls.zklock" "$ZKLOCK" -H "$BENCH_HOSTS" ls "$root" -o json
        expect_counts "$BENCH_TMP/ls.zklock" "$LS_LOCKS" "$LS_CONTENDERS"
        zklock_times+=("$BENCH_SECONDS")
        ((BENCH_RSS <= rss)) || rss=$BENCH_RSS
        bench_measure "$BENCH_TMP/ls.kazoo" "$BENCH_PYTHON" "$BENCH_ROOT/bench/kazoo_ls.py" "$BENCH_HOSTS" "$root"
        expect_counts "$BENCH_TMP/ls.kazoo" "$LS_LOCKS" "$LS_CONTENDERS"
        kazoo_times+=("$BENCH_SECONDS")
        bench_say "ls run $i: zklock ${zklock_times[-1]} s, kazoo $BENCH_SECONDS s"
    done
    zk=$(bench_median "${zklock_times[@]}")
    kz=$(bench_median "${kazoo_times[@]}")
    ratio=$(awk -v a="$zk" -v b="$kz" 'BEGIN { printf "%.3f", a / b }')
    verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.1 ? "met" : "MISSED") }')
    bench_row "ls -o json, $LS_LOCKS locks x $LS_CONTENDERS contenders, median of $RUNS" "$zk s (peak $(mb "$rss"))" \
        "$kz s (pipelined)" "-" "-" "-" "$ratio x kazoo" "<= 0.1 x kazoo: $verdict"
}

# Runs `zklock -o FORMAT ARGS...` RUNS times; checks a JSON run's counts
# against LOCKS x CONTENDERS; sets $INSPECT_SECONDS (the median) and
# $INSPECT_RSS (the largest peak RSS in KB).
inspect_runs() {
    local format=$1 locks=$2 contenders=$3 out=$BENCH_TMP/inspect.out times=() i
    shift 3
    INSPECT_RSS=0
    for ((i = 1; i <= RUNS; i++)); do
        bench_measure "$out" "$ZKLOCK" -H "$BENCH_HOSTS" -o "$format" "$@"
        [[ $format != json ]] || expect_counts "$out" "$locks" "$contenders"
        times+=("$BENCH_SECONDS")
        ((BENCH_RSS <= INSPECT_RSS)) || INSPECT_RSS=$BENCH_RSS
    done
    INSPECT_SECONDS=$(bench_median "${times[@]}")
}

# One row: COMMAND over SIZE contenders, as a table and as JSON, against a
# goal of GOAL_MB peak RSS.
inspect_row() {
    local size=$1 locks=$2 contenders=$3 command=$4 target=$5 goal_mb=$6 t_table r_table t_json r_json
    inspect_runs table "$locks" "$contenders" "$command" "$target"
    t_table=$INSPECT_SECONDS r_table=$INSPECT_RSS
    inspect_runs json "$locks" "$contenders" "$command" "$target"
    t_json=$INSPECT_SECONDS r_json=$INSPECT_RSS
    bench_say "$command over $size contenders: table $t_table s $(mb "$r_table"), JSON $t_json s $(mb "$r_json")"
    bench_row "$command, $size contenders ($locks x $contenders), median of $RUNS" \
        "table $t_table s (peak $(mb "$r_table")); JSON $t_json s (peak $(mb "$r_json"))" "-" "-" "-" "-" "-" \
        "peak RSS < $goal_mb MB: $(awk -v a="$r_table" -v b="$r_json" -v g="$goal_mb" 'BEGIN { print (a < g * 1024 && b < g * 1024 ? "met" : "MISSED") }')"
}

job_inspect() {
    local size locks
    for size in $INSPECT_SIZES; do
        locks=$((size / 5))
        populate "/bench/inspect/$size" "$locks" 5
        populate "/bench/inspect/one-$size" 1 "$size"
        inspect_row "$size" "$locks" 5 ls "/bench/inspect/$size" 40
        inspect_row "$size" 1 "$size" stat "/bench/inspect/one-$size/lock-000000" 100
        inspect_row "$size" "$locks" 5 dump "/bench/inspect/$size" 40
    done
}
