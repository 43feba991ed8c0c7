# Inspection jobs of bench/run (sourced):
#
#   ls    `zklock ls` over LS_LOCKS locks x LS_CONTENDERS contenders, against
#         bench/kazoo_ls.py doing the same job with kazoo, sequentially (get
#         and get_children of every node); medians of RUNS runs, and the
#         ratio (goal: zklock <= 0.1 x kazoo)
#   dump  `zklock dump` over DUMP_LOCKS x DUMP_CONTENDERS contenders: median
#         time and the largest peak RSS of RUNS runs (goal: < 200 MB)
#
# The contenders are ephemeral-sequential nodes named as Curator names them,
# each holding a zklock owner record (examples/populate.rs).

RUNS=${BENCH_RUNS:-5}
LS_LOCKS=${BENCH_LS_LOCKS:-2000}
LS_CONTENDERS=${BENCH_LS_CONTENDERS:-5}
DUMP_LOCKS=${BENCH_DUMP_LOCKS:-20000}
DUMP_CONTENDERS=${BENCH_DUMP_CONTENDERS:-5}

# Fills ROOT with LOCKS x CONTENDERS contenders, held until the script ends.
populate() {
    local root=$1 locks=$2 contenders=$3 out
    out=$BENCH_TMP/populate.$locks.$contenders
    bench_say "creating $locks locks x $contenders contenders under $root"
    bench_background "$out" "$POPULATE" "$BENCH_HOSTS" "$root" "$locks" "$contenders"
    bench_wait_line "$out" '^READY'
}

# How many locks, and contenders, a JSON file of locks (ls) or a dump holds.
count_locks() {
    "$BENCH_PYTHON" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
locks = doc["locks"] if isinstance(doc, dict) else doc
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
    local root=/bench/ls zklock_times=() kazoo_times=() rss=0 t r i zk kz ratio verdict
    populate "$root" "$LS_LOCKS" "$LS_CONTENDERS"
    for ((i = 1; i <= RUNS; i++)); do
        read -r t r < <(bench_measure "$BENCH_TMP/ls.zklock" "$ZKLOCK" -H "$BENCH_HOSTS" ls "$root" -o json)
        expect_counts "$BENCH_TMP/ls.zklock" "$LS_LOCKS" "$LS_CONTENDERS"
        zklock_times+=("$t")
        ((r > rss)) && rss=$r
        read -r t r < <(bench_measure "$BENCH_TMP/ls.kazoo" "$BENCH_PYTHON" "$BENCH_ROOT/bench/kazoo_ls.py" "$BENCH_HOSTS" "$root")
        expect_counts "$BENCH_TMP/ls.kazoo" "$LS_LOCKS" "$LS_CONTENDERS"
        kazoo_times+=("$t")
        bench_say "ls run $i: zklock ${zklock_times[-1]} s, kazoo $t s"
    done
    zk=$(bench_median "${zklock_times[@]}")
    kz=$(bench_median "${kazoo_times[@]}")
    ratio=$(awk -v a="$zk" -v b="$kz" 'BEGIN { printf "%.3f", a / b }')
    verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.1 ? "met" : "MISSED") }')
    bench_row "ls, $LS_LOCKS locks x $LS_CONTENDERS contenders" "$zk s (peak $(mb "$rss"))" "$kz s" "-" "-" \
        "$ratio x kazoo" "<= 0.1 x kazoo: $verdict"
}

job_dump() {
    local root=/bench/dump times=() rss=0 t r i verdict
    populate "$root" "$DUMP_LOCKS" "$DUMP_CONTENDERS"
    for ((i = 1; i <= RUNS; i++)); do
        read -r t r < <(bench_measure "$BENCH_TMP/dump.zklock" "$ZKLOCK" -H "$BENCH_HOSTS" dump "$root")
        expect_counts "$BENCH_TMP/dump.zklock" "$DUMP_LOCKS" "$DUMP_CONTENDERS"
        times+=("$t")
        ((r > rss)) && rss=$r
        bench_say "dump run $i: $t s, peak RSS $(mb "$r")"
    done
    verdict=$(awk -v kb="$rss" 'BEGIN { print (kb < 200 * 1024 ? "met" : "MISSED") }')
    bench_row "dump, $DUMP_LOCKS locks x $DUMP_CONTENDERS contenders" \
        "$(bench_median "${times[@]}") s (peak $(mb "$rss"))" "-" "-" "-" "-" "peak RSS < 200 MB: $verdict"
}

