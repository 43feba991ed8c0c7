# The exporter job of bench/run (sourced):
#
#   exporter  `zklock exporter` of one lock with EXPORTER_WAITERS waiters
#             while bench/churn_kazoo.py adds and removes waiters at
#             EXPORTER_RATE changes a second for EXPORTER_SECONDS seconds,
#             scraped ten times a second meanwhile (bench/scrape_latency.py):
#             the scrape latency (p50, p99, max) and the CPU the exporter
#             used, as a share of one core over the churn (goals: p99 <= 10
#             ms, <= 5% of a core)

EXPORTER_WAITERS=${BENCH_EXPORTER_WAITERS:-10000}
EXPORTER_RATE=${BENCH_EXPORTER_RATE:-200}
EXPORTER_SECONDS=${BENCH_EXPORTER_SECONDS:-20}

job_exporter() {
    local root=/bench/exporter lock out=$BENCH_TMP/exporter.out scrapes=$BENCH_TMP/exporter.scrapes
    local exporter port url cpu0 cpu1 start end scraper p50 p99 max count size share
    lock=$root/lock-000000
    populate "$root" 1 "$EXPORTER_WAITERS"
    port=$(bench_free_port)
    url=http://127.0.0.1:$port/metrics
    bench_background "$out" "$ZKLOCK" -H "$BENCH_HOSTS" exporter "$root" --listen "127.0.0.1:$port"
    exporter=$BENCH_PID
    # Ready once its figures show the lock's waiters.
    local deadline=$((SECONDS + 60))
    until "$BENCH_PYTHON" -c 'import sys, urllib.request; sys.exit(0 if sys.argv[2].encode() in urllib.request.urlopen(sys.argv[1], timeout=5).read() else 1)' \
        "$url" "zklock_lock_waiters{lock=\"$lock\"" 2>/dev/null; do
        ((SECONDS < deadline)) || bench_die "the exporter did not serve $lock within 60 s"
        sleep 0.2
    done
    cpu0=$(cpu_seconds "$exporter")
    start=$EPOCHREALTIME
    "$BENCH_PYTHON" "$BENCH_ROOT/bench/scrape_latency.py" "$url" "$EXPORTER_SECONDS" 0.1 >"$scrapes" &
    scraper=$!
    "$BENCH_PYTHON" "$BENCH_ROOT/bench/churn_kazoo.py" "$BENCH_HOSTS" "$lock" "$EXPORTER_RATE" "$EXPORTER_SECONDS" >/dev/null ||
        bench_die "the churn failed"
    wait "$scraper" || bench_die "scraping the exporter failed"
    end=$EPOCHREALTIME
    cpu1=$(cpu_seconds "$exporter")
    kill -TERM "$exporter"
    read -r p50 p99 max count size <"$scrapes"
    share=$(awk -v a="$cpu0" -v b="$cpu1" -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", 100 * (b - a) / (e - s) }')
    bench_say "exporter: scrape p50 $p50 ms, p99 $p99 ms, max $max ms over $count scrapes of $size bytes, $share% of a core"
    bench_row "exporter, 1 lock x $EXPORTER_WAITERS waiters, $EXPORTER_RATE changes/s for $EXPORTER_SECONDS s" \
        "scrape p50 $p50 ms, p99 $p99 ms; $share% of a core (watching, scraped 10/s)" "-" "-" "-" "-" "-" \
        "p99 <= 10 ms: $(verdict "$p99" 10 "<="); <= 5% of a core: $(verdict "$share" 5 "<=")"
}
