# The history job of bench/run (sourced):
#
#   history  `zklock history` over a transaction log of HISTORY_BYTES
#            (default 1 GB) written with ZooKeeper's own FileTxnLog as a
#            lock storm makes it (bench/WriteTxnLog.java), against
#            ZooKeeper's `TxnLogToolkit -d` dumping the same files and `cat`
#            reading them (the I/O floor), in one run, one after another
#            after a warming `cat`: time and peak memory, and the ratios
#            (goals: at least 5x faster than the toolkit, within 4x of
#            `cat`; peak memory flat in the log's size)
#
# Needs no server. Not run by CI: a gigabyte takes minutes to write.

HISTORY_BYTES=${BENCH_HISTORY_BYTES:-1000000000}
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
}
