# The check job of bench/run (sourced): one `zklock check TOKEN` as a whole
# process against the wire limit of the same question (connect, then sync,
# read and close written at once).

CHECK_RUNS=${BENCH_CHECK_RUNS:-31}

job_check() {
    local token lines zk wire
    bench_mkdirs /bench/check
    token=$("$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/check/held --detach) ||
        bench_die "could not take /bench/check/held"
    bench_timer_lines lines --warmup "$WARMUP" "$CHECK_RUNS" \
        "$ZKLOCK" -H "$BENCH_HOSTS" check "$token" \
        ::: "$WIRE_FLOOR" --check "$BENCH_HOSTS" "$token"
    "$ZKLOCK" -H "$BENCH_HOSTS" release "$token" >/dev/null
    read -r zk _ <<<"${lines[0]}"
    read -r wire _ <<<"${lines[1]}"
    bench_row "check of a held token (whole process), median of $CHECK_RUNS" "$(ms "$zk")" "-" "-" \
        "$(ms "$wire")" "-" "$(ratio "$zk" "$wire") x limit" "-"
}
