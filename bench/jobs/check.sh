# The check job of bench/run (sourced): one `zklock check TOKEN` as a whole
# process against the wire limit of the same question (connect, then sync,
# read and close written at once).

CHECK_RUNS=${BENCH_CHECK_RUNS:-31}

job_check() {
    local token results zk wire
    bench_mkdirs /bench/check
    token=$("$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/check/held --detach) ||
        bench_die "could not take /bench/check/held"
    results=$("$BENCH_TIMER" --warmup 3 "$CHECK_RUNS" \
        "$ZKLOCK" -H "$BENCH_HOSTS" check "$token" \
        ::: "$WIRE_FLOOR" --check "$BENCH_HOSTS" "$token") ||
        bench_die "the check job failed"
    "$ZKLOCK" -H "$BENCH_HOSTS" release "$token" >/dev/null
    {
        read -r zk _
        read -r wire _
    } <<<"$results"
    bench_row "check of a held token (whole process), median of $CHECK_RUNS" "$(ms "$zk")" "-" "-" \
        "$(ms "$wire")" "-" "$(ratio "$zk" "$wire") x limit" "-"
}
