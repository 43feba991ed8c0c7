# The history job of bench/run (sourced):
#
#   history  `zklock history` over a transaction log of HISTORY_BYTES
#            (default 1 GB) written with ZooKeeper's own FileTxnLog as a
#            lock storm makes it (bench/WriteTxnLog.java), against
#            ZooKeeper's `TxnLogToolkit -d` dumping the same files and `cat`
#            reading them (the I/O floor), in one run, one after another
#            after a warming `cat`: time and peak memory, and the ratios
#            (goals: at least 5x faster than the toolkit, within 4x of
#            `cat`; peak memory flat in the log's size); then, one row each,
#            the shapes of log that once made history slow or large
#            (WriteTxnLog's SHAPE N, at the size each was reported at;
#            BENCH_HISTORY_SHAPE_PERCENT scales them): time and peak memory
#            of `history / -o json` over each, the HBase readers beside the
#            same count of generic contenders (goal: time within 2x of
#            that control, and every row's memory that of its live
#            contenders, not of its log)
#
# Needs no server. Not run by CI: a gigabyte takes minutes to write.

HISTORY_BYTES=${BENCH_HISTORY_BYTES:-1000000000}
HISTORY_SHAPE_PERCENT=${BENCH_HISTORY_SHAPE_PERCENT:-100}
BENCH_ZK_CP=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar

job_history() {
    local data=$BENCH_TMP/history logs size zk tk ct rss tk_rss log ratio_tk ratio_cat verdict
    bench_say "writing a transaction log of $HISTORY_BYTES bytes with FileTxnLog"
    javac -nowarn -cp "$BENCH_ZK_CP" -d "$BENCH_TMP/history-classes" "$BENCH_ROOT/bench/WriteTxnLog.java"
    java -cp "$BENCH_TMP/history-classes:$BENCH_ZK_CP" WriteTxnLog "$data" "$HISTORY_BYTES" >&2
    mapfile -t logs < <(find "$data/version-2" -name 'log.*' | sort)
    size=$(cat "${logs[@]}" | wc -c)
    # The first `cat` only warms the page cache.
    bench_measure /dev/null cat "${logs[@]}"
    bench_measure /dev/null cat "${logs[@]}"
    ct=$BENCH_SECONDS
    bench_measure "$BENCH_TMP/history.json" "$ZKLOCK" history / --data-dir "$data" -o json
    zk=$BENCH_SECONDS rss=$BENCH_RSS
    # The toolkit dumps one file per run, as it is used.
    tk=0 tk_rss=0
    for log in "${logs[@]}"; do
        bench_measure /dev/null java -cp "$BENCH_ZK_CP" \
            org.apache.zookeeper.server.persistence.TxnLogToolkit -d "$log"
        tk=$(awk -v a="$tk" -v b="$BENCH_SECONDS" 'BEGIN { print a + b }')
        ((BENCH_RSS <= tk_rss)) || tk_rss=$BENCH_RSS
    done
    ratio_tk=$(awk -v a="$tk" -v b="$zk" 'BEGIN { printf "%.1f", a / b }')
    ratio_cat=$(awk -v a="$zk" -v b="$ct" 'BEGIN { printf "%.1f", a / b }')
    verdict=$(awk -v t="$ratio_tk" -v c="$ratio_cat" 'BEGIN { print (t >= 5 && c <= 4) ? "met" : "MISSED" }')
    bench_row "history -o json, $(mb $((size / 1024))) of logs" "$zk s (peak $(mb "$rss"))" "-" \
        "TxnLogToolkit -d: $tk s (peak $(mb "$tk_rss"))" "cat: $ct s" "-" \
        "toolkit/zklock ${ratio_tk}x, zklock/cat ${ratio_cat}x" ">= 5x, <= 4x: $verdict"
    history_shapes
}

# Writes WriteTxnLog's SHAPE at N scaled (its data dir is
# $BENCH_TMP/history-SHAPE) and prints "<seconds> <peak KB> <N scaled>" of
# `zklock history / --data-dir DIR -o json ARGS...` over it.
history_shape() {
    local shape=$1 n=$(($2 * HISTORY_SHAPE_PERCENT / 100)) data t rss
    shift 2
    ((n >= 16)) || n=16
    data=$BENCH_TMP/history-$shape
    java -Xmx4g -cp "$BENCH_TMP/history-classes:$BENCH_ZK_CP" WriteTxnLog "$data" 0 "$shape" "$n" >&2
    read -r t rss <<<"$(bench_measure /dev/null "$ZKLOCK" history / --data-dir "$data" -o json "$@")"
    rm -rf "$data"
    printf '%s %s %s\n' "$t" "$rss" "$n"
}

history_shapes() {
    local t rss n ct crss ratio verdict shape
    read -r t rss n <<<"$(history_shape readers 32000)"
    read -r ct crss _ <<<"$(history_shape waiters 32000)"
    ratio=$(awk -v a="$t" -v b="$ct" 'BEGIN { printf "%.1f", a / (b > 0.001 ? b : 0.001) }')
    verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 2) ? "met" : "MISSED" }')
    bench_row "history: $n HBase readers in one directory" "$t s (peak $(mb "$rss"))" "-" "-" \
        "$n generic contenders: $ct s (peak $(mb "$crss"))" "-" "${ratio}x the control" "<= 2x: $verdict"
    for shape in "mixed-readers 8000 --overlaps" "end-record 330000" "leases 20000" \
        "empty-multi 8000000" "big-snapshot 60000000"; do
        # shellcheck disable=SC2086 # the shape, its size and its flags
        read -r t rss n <<<"$(history_shape $shape)"
        bench_row "history: $(history_shape_says "${shape%% *}" "$n")" "$t s (peak $(mb "$rss"))" \
            "-" "-" "-" "-" "-" "-"
    done
}

# What a shape of N is, for the table.
history_shape_says() {
    case $1 in
    mixed-readers) echo "--overlaps over $2 readers of kazoo and Curator alternating" ;;
    end-record) echo "one multi ending $2 contenders beside one end record naming each" ;;
    leases) echo "one holder making $2 Curator leases, then $2 other transactions" ;;
    empty-multi) echo "one multi of $2 empty operations" ;;
    big-snapshot) echo "a gzip snapshot of 16 contenders, names and data of $2 bytes" ;;
    esac
}
