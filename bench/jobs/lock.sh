# Lock jobs of bench/run (sourced): one uncontended lock-run-release as a
# whole process, handoffs per second under contention, requests and bytes
# per handoff (herd, drain), and start-up time.

LOCK_RUNS=${BENCH_LOCK_RUNS:-31}
# Rounds the timer runs and throws away before it times (lock, check,
# startup).
WARMUP=${BENCH_WARMUP:-3}
HANDOFF_WORKERS=${BENCH_HANDOFF_WORKERS:-8}
HANDOFF_EACH=${BENCH_HANDOFF_EACH:-25}
HANDOFF_LOOPS=${BENCH_HANDOFF_LOOPS:-200}
# The two queue lengths herd compares, and how many handoffs of each.
HERD_SIZES=${BENCH_HERD_SIZES:-10 100}
HERD_RELEASES=${BENCH_HERD_RELEASES:-5}
DRAIN_SIZES=${BENCH_DRAIN_SIZES:-200 1000}
# Long sessions for queued waiters, so that their pings stay out of the
# counts (the bench server allows them).
WAITER_SESSION=300s

ms() { awk -v s="$1" 'BEGIN { printf "%.2f ms", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
verdict() { awk -v v="$1" -v limit="$2" -v op="$3" 'BEGIN {
    ok = (op == "<=") ? v <= limit : v >= limit
    print (ok ? "met" : "MISSED") }'; }
# per N TOTAL: TOTAL / N, rounded.
per() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", t / n }'; }

# One uncontended `zklock lock L -- true` as a whole process, against the
# wire limit, the floor on zklock's client crate, a kazoo script and a
# Curator program doing the same job. The timer runs them in turn,
# LOCK_RUNS times after three rounds of warm-up, and reports medians. With
# BENCH_ZKLOCK_BEFORE (another zklock binary, say the last release) the
# timer runs it too, alternating with this one, so a change to the lock
# path is measured before and after in one run, under the same load.
job_lock() {
    local zk wire floor kz cu before lines
    local timed=("$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/lock/zklock -- true
        ::: "$WIRE_FLOOR" "$BENCH_HOSTS" /bench/lock/wire true
        ::: "$FLOOR" "$BENCH_HOSTS" /bench/lock/floor true
        ::: "$BENCH_PYTHON" "$BENCH_ROOT/bench/lock_kazoo.py" "$BENCH_HOSTS" /bench/lock/kazoo true
        ::: java -cp "$BENCH_CLASSES:$BENCH_CURATOR_CP" LockCurator "$BENCH_HOSTS" /bench/lock/curator true)
    bench_mkdirs /bench/lock/zklock /bench/lock/wire /bench/lock/floor /bench/lock/kazoo /bench/lock/curator
    if [[ -n ${BENCH_ZKLOCK_BEFORE:-} ]]; then
        bench_mkdirs /bench/lock/before
        timed+=(::: "$BENCH_ZKLOCK_BEFORE" -H "$BENCH_HOSTS" lock /bench/lock/before -- true)
    fi
    bench_timer_lines lines --warmup "$WARMUP" "$LOCK_RUNS" "${timed[@]}"
    read -r zk _ <<<"${lines[0]}"
    read -r wire _ <<<"${lines[1]}"
    read -r floor _ <<<"${lines[2]}"
    read -r kz _ <<<"${lines[3]}"
    read -r cu _ <<<"${lines[4]}"
    local to_wire to_kazoo
    to_wire=$(ratio "$zk" "$wire")
    to_kazoo=$(ratio "$zk" "$kz")
    bench_row "lock-run-release (whole process), median of $LOCK_RUNS" "$(ms "$zk")" "$(ms "$kz")" "$(ms "$cu")" \
        "$(ms "$wire")" "$(ms "$floor")" \
        "$to_wire x limit, $(ratio "$zk" "$floor") x crate floor, $to_kazoo x kazoo, $(ratio "$zk" "$cu") x Curator" \
        "<= 1.3 x limit: $(verdict "$to_wire" 1.3 "<="); <= 0.15 x kazoo: $(verdict "$to_kazoo" 0.15 "<=")"
    if [[ -n ${BENCH_ZKLOCK_BEFORE:-} ]]; then
        read -r before _ <<<"${lines[5]}"
        bench_row "lock-run-release, this build against BENCH_ZKLOCK_BEFORE" "$(ms "$zk")" "-" "-" "-" "-" \
            "$(ratio "$zk" "$before") x before ($(ms "$before"))" "within noise of before"
    fi
}

# Handoffs per second: HANDOFF_WORKERS workers each run CMD HANDOFF_EACH
# times on one lock, a whole process per handoff; sets $HANDOFF_RATE, runs
# per second.
handoffs_per_second() {
    local start=$EPOCHREALTIME pids=() w
    for ((w = 0; w < HANDOFF_WORKERS; w++)); do
        (for ((j = 0; j < HANDOFF_EACH; j++)); do "$@" >/dev/null || exit 1; done) &
        pids+=("$!")
        BENCH_PIDS+=("$!")
    done
    for w in "${pids[@]}"; do wait "$w" || bench_die "a worker failed: $*"; done
    HANDOFF_RATE=$(awk -v a="$start" -v b="$EPOCHREALTIME" -v n=$((HANDOFF_WORKERS * HANDOFF_EACH)) \
        'BEGIN { printf "%.1f", n / (b - a) }')
}

# Handoffs per second of long-lived processes: HANDOFF_WORKERS workers
# (CMD HOSTS LOCK LOOPS GO_FILE, as bench/lock_loop_kazoo.py) connect and
# print READY; once all have, the go file appears and each loops over
# acquire/release HANDOFF_LOOPS times and prints when it finished. Sets
# $LOOP_RATE: all handoffs over the time from go to the last finish, so no
# start-up is counted.
loop_rate() {
    local lock=$1 go=$BENCH_TMP/go.$RANDOM pids=() outs=() w start last
    shift
    for ((w = 0; w < HANDOFF_WORKERS; w++)); do
        outs+=("$BENCH_TMP/loop.$w.$RANDOM")
        bench_background "${outs[w]}" "$@" "$BENCH_HOSTS" "$lock" "$HANDOFF_LOOPS" "$go"
        pids+=("$BENCH_PID")
    done
    for w in "${outs[@]}"; do bench_wait_line "$w" '^READY'; done
    start=$EPOCHREALTIME
    : >"$go"
    for w in "${pids[@]}"; do wait "$w" || bench_die "a long-lived worker failed: $*"; done
    last=$(tail -qn 1 "${outs[@]}" | sort -g | tail -n 1)
    LOOP_RATE=$(awk -v a="$start" -v b="$last" -v n=$((HANDOFF_WORKERS * HANDOFF_LOOPS)) \
        'BEGIN { printf "%.1f", n / (b - a) }')
}

# The whole-process job of job_lock by HANDOFF_WORKERS contending processes
# (zklock, kazoo), and beside it kazoo and Curator as long-lived processes,
# one session each, looping over acquire/release: the strongest each can do.
job_handoff() {
    local zk kz kz_loop cu_loop
    bench_mkdirs /bench/handoff/zklock /bench/handoff/kazoo /bench/handoff/kazoo-loop /bench/handoff/curator-loop
    handoffs_per_second "$ZKLOCK" -H "$BENCH_HOSTS" lock /bench/handoff/zklock -- true
    zk=$HANDOFF_RATE
    handoffs_per_second "$BENCH_PYTHON" "$BENCH_ROOT/bench/lock_kazoo.py" "$BENCH_HOSTS" /bench/handoff/kazoo true
    kz=$HANDOFF_RATE
    loop_rate /bench/handoff/kazoo-loop "$BENCH_PYTHON" "$BENCH_ROOT/bench/lock_loop_kazoo.py"
    kz_loop=$LOOP_RATE
    loop_rate /bench/handoff/curator-loop java -cp "$BENCH_CLASSES:$BENCH_CURATOR_CP" LockLoopCurator
    cu_loop=$LOOP_RATE
    local vs
    vs=$(ratio "$zk" "$kz")
    bench_row "handoffs/s, $HANDOFF_WORKERS contenders" \
        "$zk/s (a process per handoff, x $HANDOFF_EACH each)" \
        "$kz/s (a process per handoff); $kz_loop/s (long-lived, x $HANDOFF_LOOPS each)" \
        "$cu_loop/s (long-lived, x $HANDOFF_LOOPS each)" "-" "-" \
        "$vs x kazoo per process, $(ratio "$zk" "$kz_loop") x kazoo long-lived, $(ratio "$zk" "$cu_loop") x Curator long-lived" \
        ">= 3 x kazoo per process: $(verdict "$vs" 3 ">=")"
}

# The proxy's counters on one line: requests, of which keep-alive (pings
# and heartbeat syncs), response bytes, of which keep-alive.
counters() {
    local counts up down requests keepalive keepalive_down
    counts=$(bench_proxy_counts)
    read -r up down requests keepalive keepalive_down <<<"$counts"
    printf '%s %s %s %s\n' "$requests" "$keepalive" "$down" "$keepalive_down"
}

# What changed between two `counters` lines, without the keep-alive
# traffic: "<requests> <response bytes>". Idle sessions send keep-alives at
# a rate of their own, so how many land in a window depends on its length
# and on how many sessions are open, not on what the window measures.
handoff_traffic() {
    local r0 k0 d0 kd0 r1 k1 d1 kd1
    read -r r0 k0 d0 kd0 <<<"$1"
    read -r r1 k1 d1 kd1 <<<"$2"
    printf '%s %s\n' $(((r1 - r0) - (k1 - k0))) $(((d1 - d0) - (kd1 - kd0)))
}

# Keep-alive traffic between two `counters` lines: "<requests> <bytes>".
keepalive_traffic() {
    local k0 kd0 k1 kd1
    read -r _ k0 _ kd0 <<<"$1"
    read -r _ k1 _ kd1 <<<"$2"
    printf '%s %s\n' $((k1 - k0)) $((kd1 - kd0))
}

# Starts a zklock holder of LOCK through the proxy and waits until it holds;
# sets $BENCH_PID.
start_holder() {
    local lock=$1 out=$2
    bench_background "$out" "$ZKLOCK" -H "$BENCH_PROXY_HOSTS" --session-timeout "$WAITER_SESSION" lock "$lock"
    bench_wait_line "$out" '^/'
}

# Requests and response bytes per handoff with WAITERS zklock waiters
# queued, all through the counting proxy: what the server received and
# sent between a holder's release and the next waiter holding, median of
# HERD_RELEASES handoffs, keep-alive traffic left out and counted apart.
# Sets $HERD_COUNTS to "<requests> <response bytes> <keep-alive requests>
# <keep-alive bytes>".
herd_counts() {
    local waiters=$1 lock=/bench/herd/$1 out pids=() requests=() bytes=() kreq=() kbytes=() i
    out=$BENCH_TMP/herd.$waiters
    # Fails on a second queue of the same length, whose lock and lines
    # would be the first's.
    mkdir "$out"
    start_holder "$lock" "$out/0"
    pids+=("$BENCH_PID")
    # One at a time, so the queue order is the start order.
    for ((i = 1; i <= waiters; i++)); do
        bench_background "$out/$i" "$ZKLOCK" -H "$BENCH_PROXY_HOSTS" --session-timeout "$WAITER_SESSION" lock "$lock"
        pids+=("$BENCH_PID")
        bench_wait_contenders "$lock" $((i + 1))
    done
    local before after traffic r d
    for ((i = 1; i <= HERD_RELEASES; i++)); do
        before=$(counters)
        kill -TERM "${pids[i - 1]}"
        bench_wait_line "$out/$i" '^/'
        after=$(counters)
        traffic=$(handoff_traffic "$before" "$after")
        read -r r d <<<"$traffic"
        requests+=("$r")
        bytes+=("$d")
        traffic=$(keepalive_traffic "$before" "$after")
        read -r r d <<<"$traffic"
        kreq+=("$r")
        kbytes+=("$d")
    done
    for i in "${pids[@]}"; do kill -TERM "$i" 2>/dev/null || true; done
    HERD_COUNTS="$(per 1 "$(bench_median "${requests[@]}")") $(per 1 "$(bench_median "${bytes[@]}")")"
    HERD_COUNTS+=" $(per 1 "$(bench_median "${kreq[@]}")") $(per 1 "$(bench_median "${kbytes[@]}")")"
}

job_herd() {
    local few many few_requests few_bytes few_kreq few_kbytes many_requests many_bytes many_kreq many_kbytes
    read -r few many <<<"$HERD_SIZES"
    ((few >= HERD_RELEASES)) || bench_die "herd needs at least $HERD_RELEASES waiters (BENCH_HERD_RELEASES)"
    [[ -n ${BENCH_PROXY_PID:-} ]] || bench_proxy_start
    herd_counts "$few"
    read -r few_requests few_bytes few_kreq few_kbytes <<<"$HERD_COUNTS"
    herd_counts "$many"
    read -r many_requests many_bytes many_kreq many_kbytes <<<"$HERD_COUNTS"
    bench_row "herd: per handoff, median of $HERD_RELEASES (keep-alives apart)" \
        "$few waiters: $few_requests requests, $few_bytes B; $many waiters: $many_requests requests, $many_bytes B (keep-alives in the window: $few_kreq and $many_kreq requests, $few_kbytes and $many_kbytes B)" \
        "-" "-" "-" "-" \
        "$(ratio "$many_requests" "$few_requests") x requests, $(ratio "$many_bytes" "$few_bytes") x bytes ($many vs $few waiters)" \
        "independent of waiters: $(awk -v a="$few_requests" -v b="$many_requests" -v x="$few_bytes" -v y="$many_bytes" \
            'BEGIN { print (b <= a + 1 && y <= 1.1 * x ? "met" : "MISSED") }')"
}

# Drains a queue of N zklock waiters (`lock L -- true`, each through HOSTS)
# behind one holder: releases the holder and waits until every waiter has
# held, run its command and exited. Sets $DRAIN_RESULT to "<seconds>
# <requests> <response bytes> <keep-alive requests> <keep-alive bytes>"
# over the whole drain, the first two without keep-alives (counts only when
# HOSTS is the proxy).
drain_once() {
    local n=$1 hosts=$2 lock=/bench/drain/$1.$RANDOM out pids=() i holder start end
    # A directory of each drain's own: a holder's line left by the drain
    # before would pass for this holder's before it holds.
    out=$BENCH_TMP/drain.${lock##*/}
    mkdir "$out"
    start_holder "$lock" "$out/holder"
    holder=$BENCH_PID
    for ((i = 1; i <= n; i++)); do
        "$ZKLOCK" -H "$hosts" --session-timeout "$WAITER_SESSION" lock "$lock" -- true </dev/null >/dev/null &
        pids+=("$!")
        BENCH_PIDS+=("$!")
    done
    bench_wait_contenders "$lock" $((n + 1))
    local before after
    before=$(counters)
    start=$EPOCHREALTIME
    kill -TERM "$holder"
    for i in "${pids[@]}"; do wait "$i" || bench_die "a drain waiter failed"; done
    end=$EPOCHREALTIME
    after=$(counters)
    DRAIN_RESULT="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
    DRAIN_RESULT+=" $(handoff_traffic "$before" "$after") $(keepalive_traffic "$before" "$after")"
}

# Draining N = DRAIN_SIZES queued waiters: time, requests and response
# bytes per handoff. Timed without the proxy (which adds latency), counted
# in a second drain through it. Goals: at most 1,500 bytes per handoff with
# 200 waiters, and per handoff for a longer queue within 10% of the first
# size's.
job_drain() {
    local n t d pt pr kr kd bytes first_bytes="" goal sizes
    read -ra sizes <<<"$DRAIN_SIZES"
    [[ -n ${BENCH_PROXY_PID:-} ]] || bench_proxy_start
    for n in "${sizes[@]}"; do
        drain_once "$n" "$BENCH_HOSTS"
        read -r t _ <<<"$DRAIN_RESULT"
        drain_once "$n" "$BENCH_PROXY_HOSTS"
        read -r pt pr d kr kd <<<"$DRAIN_RESULT"
        bench_say "drain of $n: $t s direct, $pt s through the proxy ($pr requests; keep-alives apart: $kr requests, $kd B)"
        bytes=$(per "$n" "$d")
        if [[ -z $first_bytes ]]; then
            first_bytes=$bytes
            goal="-"
        else
            goal="bytes per handoff within 10% of those with ${sizes[0]} waiters: $(verdict "$bytes" "$((first_bytes * 11 / 10))" "<=")"
        fi
        ((n == 200)) && goal="<= 1,500 B per handoff: $(verdict "$bytes" 1500 "<=")"
        bench_row "drain $n queued waiters: per handoff" \
            "$(ms "$(awk -v t="$t" -v n="$n" 'BEGIN { print t / n }')"), $(per "$n" "$pr") requests, $bytes B ($(awk -v d="$d" 'BEGIN { printf "%.1f", d / 1e6 }') MB a drain; keep-alives apart: $(per "$n" "$kd") B)" \
            "-" "-" "-" "-" "-" "$goal"
    done
}

# `zklock --version` start-up time against /bin/true, median of LOCK_RUNS.
job_startup() {
    local zk tr fl zk_rss tr_rss lines
    bench_timer_lines lines --warmup "$WARMUP" "$LOCK_RUNS" "$ZKLOCK" --version ::: /bin/true \
        ::: "$STARTUP_FLOOR"
    read -r zk _ _ zk_rss <<<"${lines[0]}"
    read -r tr _ _ tr_rss <<<"${lines[1]}"
    read -r fl _ <<<"${lines[2]}"
    bench_row "zklock --version start-up, median of $LOCK_RUNS" "$(ms "$zk") (peak $zk_rss KB)" "-" "-" \
        "$(ms "$tr") (/bin/true, peak $tr_rss KB)" "$(ms "$fl") (a Rust program printing the line)" \
        "$(ratio "$zk" "$tr") x /bin/true, $(ratio "$fl" "$tr") x for the Rust floor" \
        "<= 1.5 x /bin/true: $(verdict "$(ratio "$zk" "$tr")" 1.5 "<=")"
}
