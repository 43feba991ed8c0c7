//! Monitoring output checked by its real consumers: `ls -o prometheus`
//! read by `promtool check metrics` (Debian's prometheus package), with
//! its values against a tree of known zklock, kazoo and Curator holders
//! and waiters, written atomically with `--output-file`; and the durations
//! and `how` of `watch -o json` events against known sequences (a release
//! by the owner, a delete by another session, a revocation, an expired
//! session).

use crate::support;
use crate::watch::{expect, next_event};

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use support::peers::{self, Library, acquired, peer};
use support::proxy::{ClientMessage, FaultProxy, op};
use support::tmux::{Tmux, command_line};
use support::{Running, Scratch, TestEnv, ZkEnsemble, ZkOptions, ZkServer, wait_until};

pub const WAIT: Duration = Duration::from_secs(30);

/// `promtool`, or a failure that names what installs it.
fn promtool() -> std::path::PathBuf {
    support::find_on_path("promtool").unwrap_or_else(|| {
        panic!("promtool is not installed: run scripts/setup (or: apt-get install prometheus)")
    })
}

/// Asserts that `promtool check metrics` accepts `text` with no complaint.
#[track_caller]
pub fn promtool_accepts(text: &str) {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool ends");
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics refused:\n{text}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The samples of a text exposition: `name` → the value of each series, by
/// its `lock` label (empty when it has none). Label values here hold no
/// escaped quote or comma.
fn samples(text: &str) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut samples: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let lock = labels
            .split(',')
            .find_map(|label| label.strip_prefix("lock=\""))
            .map_or("", |value| {
                value.trim_end_matches('}').trim_end_matches('"')
            });
        samples
            .entry(name.to_owned())
            .or_default()
            .insert(lock.to_owned(), value.parse().expect("a number"));
    }
    samples
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64
}

/// `zklock lock LOCK` holding until SIGTERM, once it holds; and its token.
pub fn hold(env: &TestEnv, lock: &str) -> (Running, String) {
    let mut holder = env.zklock(["lock", lock]).spawn();
    let token = holder.next_line(WAIT);
    (holder, token)
}

/// A waiter on `lock` shows in the tree.
fn wait_for_waiters(env: &TestEnv, lock: &str, count: usize) {
    wait_until(WAIT, &format!("{count} contenders wait on {lock}"), || {
        env.zk().children(lock).len() == count + 1
    });
}

#[test]
fn ls_prints_metrics_promtool_accepts_with_the_tree_s_figures() {
    let env = TestEnv::new();
    // /locks/a: a zklock holder, a kazoo and a Curator waiter.
    let (holder, token) = hold(&env, "a");
    let kazoo = peer(&env, Library::Kazoo, "/locks/a", "mutex", &[]);
    wait_for_waiters(&env, "/locks/a", 1);
    let curator = peer(&env, Library::Curator, "/locks/a", "mutex", &[]);
    wait_for_waiters(&env, "/locks/a", 2);
    // /locks/b: a kazoo holder alone.
    let mut alone = peer(&env, Library::Kazoo, "/locks/b", "mutex", &[]);
    let alone_node = acquired(&mut alone, WAIT);

    let before = now_ms();
    let run = env.zklock(["-o", "prometheus", "ls"]).run();
    let after = now_ms();
    run.assert_success();
    promtool_accepts(&run.stdout);
    let samples = samples(&run.stdout);
    let value = |name: &str, lock: &str| samples.get(name).and_then(|s| s.get(lock)).copied();

    assert_eq!(value("zklock_lock_holders", "/locks/a"), Some(1.0));
    assert_eq!(value("zklock_lock_waiters", "/locks/a"), Some(2.0));
    assert_eq!(value("zklock_lock_holders", "/locks/b"), Some(1.0));
    assert_eq!(value("zklock_lock_waiters", "/locks/b"), Some(0.0));
    // Nobody waits on b: its oldest wait is absent, not 0.
    assert_eq!(value("zklock_lock_oldest_wait_seconds", "/locks/b"), None);
    // Every member answered: no holder is disconnected.
    assert_eq!(
        value("zklock_lock_disconnected_holders", "/locks/a"),
        Some(0.0)
    );
    for (lock, node) in [
        ("/locks/a", token.as_str()),
        ("/locks/b", alone_node.as_str()),
    ] {
        let ctime = env.zk().get(node).1.ctime;
        let age = value("zklock_lock_holder_age_seconds", lock).expect("a holder age");
        let (low, high) = ((before - ctime) as f64 / 1e3, (after - ctime) as f64 / 1e3);
        assert!(
            age >= low - 1.0 && age <= high + 1.0,
            "{lock}: age {age}s outside [{low}, {high}]"
        );
    }
    assert!(value("zklock_scrape_duration_seconds", "").is_some());
    // Owners never become labels.
    assert!(!run.stdout.contains("owner") && !run.stdout.contains("host="));

    // The ls filters apply.
    let contended = env.zklock(["-o", "prometheus", "ls", "--contended"]).run();
    contended.assert_success();
    let contended = self::samples(&contended.stdout);
    assert_eq!(
        contended["zklock_lock_holders"].keys().collect::<Vec<_>>(),
        ["/locks/a"]
    );

    peers::release(alone);
    peers::release(kazoo);
    peers::release(curator);
    let mut holder = holder;
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn output_file_is_replaced_whole_and_leaves_no_temporary_file() {
    let env = TestEnv::new();
    let (mut holder, _) = hold(&env, "f");
    let scratch = Scratch::new();
    let file = scratch.file("zklock.prom");
    std::fs::write(&file, "stale\n").expect("write the old file");
    env.zklock(["-o", "prometheus", "ls", "--output-file"])
        .arg(&file)
        .run()
        .assert_success();
    let text = std::fs::read_to_string(&file).expect("read the metrics file");
    promtool_accepts(&text);
    assert_eq!(samples(&text)["zklock_lock_holders"]["/locks/f"], 1.0);
    let dir = file.parent().expect("a directory");
    let names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(names, ["zklock.prom"], "something was left beside the file");
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn flags_that_do_not_apply_to_metrics_are_usage_errors() {
    let env = TestEnv::new();
    for args in [
        &["-o", "prometheus", "ls", "--sort", "age"][..],
        &["-o", "prometheus", "ls", "--no-headers"],
        &["-o", "prometheus", "stat", "x"],
        &["ls", "--output-file", "/tmp/zklock-never.prom"],
    ] {
        env.zklock(args).run().assert_code(2);
    }
}

/// `zklock -o json watch LOCK`, started, once it has printed its
/// `watching` line.
fn watch(env: &TestEnv, lock: &str) -> Running {
    let mut watching = env.zklock(["-o", "json", "watch", lock]).spawn();
    while next_event(&mut watching).event != "watching" {}
    watching
}

#[test]
fn a_release_by_the_owner_and_a_handoff_carry_durations_and_how() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/d");
    let mut watching = watch(&env, "d");
    // The test's own session holds, and lives on after it lets go.
    let first = env.zk().create_ephemeral_sequential("/locks/d/lock-", b"");
    let acquired_first = expect(&mut watching, "acquired", &first);
    // New to the watch and holding at once: it waited for nothing.
    assert_eq!(acquired_first.waited_ms, Some(0));
    let mut waiter = env.zklock(["lock", "d"]).spawn();
    let waiting = next_event(&mut watching);
    assert_eq!(waiting.event, "waiting", "{waiting:#?}");
    let second = waiting.node.clone().expect("a node");
    wait_until(WAIT, "some time passes on the watch's clock", || {
        now_ms() - waiting.time_ms >= 300
    });
    env.zk().delete(&first);
    let released = expect(&mut watching, "released", &first);
    let held = released
        .held_ms
        .expect("held_ms on a hold the watch saw begin");
    assert!(
        held >= 300 && held <= released.time_ms - acquired_first.time_ms,
        "{released:#?}"
    );
    assert_eq!(
        (released.how.as_deref(), released.how_evidence.as_deref()),
        (
            Some("deleted_while_session_alive"),
            Some("session_connected")
        ),
        "{released:#?}"
    );
    let acquired_second = expect(&mut watching, "acquired", &second);
    let waited = acquired_second
        .waited_ms
        .expect("waited_ms on a wait it saw begin");
    assert!(
        waited >= 300 && waited == acquired_second.time_ms - waiting.time_ms,
        "{acquired_second:#?}"
    );
    assert_eq!(waiter.next_line(WAIT), second);
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT).assert_success();
}

#[test]
fn a_hold_under_way_when_the_watch_began_has_no_duration_and_a_delete_by_another_is_told() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/o");
    let node = env.zk().create_ephemeral_sequential("/locks/o/lock-", b"");
    let mut watching = watch(&env, "o");
    // ZooKeeper does not say who deleted it, but zklock's end record does.
    env.zklock(["release", &node, "--reason", "a test"])
        .run()
        .assert_success();
    let released = expect(&mut watching, "released", &node);
    assert_eq!(released.held_ms, None, "{released:#?}");
    assert_eq!(
        (released.how.as_deref(), released.how_evidence.as_deref()),
        (Some("broken"), Some("end_record")),
        "{released:#?}"
    );
    let by = released.ended_by.expect("who broke it");
    assert_eq!(by.reason.as_deref(), Some("a test"));
    // A delete by another client writes none: its session lives, that is all.
    let other = env.zk().create_ephemeral_sequential("/locks/o/lock-", b"");
    expect(&mut watching, "acquired", &other);
    env.connect().delete(&other);
    let released = expect(&mut watching, "released", &other);
    assert_eq!(
        released.how.as_deref(),
        Some("deleted_while_session_alive"),
        "{released:#?}"
    );
}

#[test]
fn the_exporter_counts_clean_releases_as_released_and_a_break_as_broken() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/n");
    let (mut running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let ends = || {
        by_label(
            &get(&address, "/metrics", None).expect("an answer").2,
            "zklock_hold_ends_total",
            "how",
        )
    };
    // Each hold lasts long enough for the watch to read its node: one that
    // comes and goes between two readings is not seen at all.
    for _ in 0..12 {
        env.zklock(["lock", "n", "--", "sleep", "0.2"])
            .run()
            .assert_success();
    }
    let (mut holder, token) = hold(&env, "n");
    env.zklock(["release", &token]).run().assert_success();
    holder.wait(WAIT).assert_code(4);
    wait_until(WAIT, "13 ends counted", || {
        ends().values().sum::<f64>() == 13.0
    });
    let counted = ends();
    assert_eq!(
        (
            counted["released"],
            counted["broken"],
            counted["session_ended"]
        ),
        (12.0, 1.0, 0.0),
        "{counted:?}"
    );
    running.signal(libc::SIGTERM);
    running.wait(WAIT).assert_success();
}

#[test]
fn a_revoked_holder_reads_revoked() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/v");
    let mut watching = watch(&env, "v");
    let released = |watching: &mut Running| loop {
        let event = next_event(watching);
        if event.event == "released" {
            break event;
        }
    };
    // A revocable Curator holder lets go when asked: revoked.
    let mut curator = peer(
        &env,
        Library::Curator,
        "/locks/v",
        "mutex",
        &["--revocable"],
    );
    let node = acquired(&mut curator, WAIT);
    expect(&mut watching, "acquired", &node);
    env.zklock(["release", "--revoke", "v"])
        .run()
        .assert_success();
    let event = released(&mut watching);
    assert_eq!(
        (event.how.as_deref(), event.how_evidence.as_deref()),
        (Some("revoked"), Some("revoke_written")),
        "{event:#?}"
    );
    assert!(event.held_ms.is_some(), "{event:#?}");
    curator.wait(WAIT).assert_success();
    // A zklock holder asked to let go stops its command mid-way: its hold
    // is lost, as the record it deletes its node with says.
    let (mut holder, node) = hold(&env, "v");
    expect(&mut watching, "acquired", &node);
    env.zklock(["release", "--revoke", "v"])
        .run()
        .assert_success();
    let event = released(&mut watching);
    assert_eq!(
        (event.how.as_deref(), event.how_evidence.as_deref()),
        (Some("lost"), Some("end_record")),
        "{event:#?}"
    );
    holder.wait(WAIT).assert_code(4);
}

#[test]
fn a_hold_whose_session_expired_reads_session_ended() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let proxy = FaultProxy::start(env.servers());
    env.zk().mkdir_p("/locks/e");
    let mut watching = watch(&env, "e");
    let mut holder = support::Zklock::new(["--session-timeout", "1s", "lock", "e"])
        .hosts(proxy.hosts(&env))
        .spawn();
    let node = holder.next_line(WAIT);
    expect(&mut watching, "acquired", &node);
    proxy.freeze();
    let released = expect(&mut watching, "released", &node);
    assert_eq!(
        (released.how.as_deref(), released.how_evidence.as_deref()),
        (Some("session_ended"), Some("session_listed_nowhere")),
        "{released:#?}"
    );
    proxy.pass();
    holder.wait(WAIT).assert_code(4);
}

/// `zklock exporter --listen ADDR EXTRA...` started on a free port, once
/// it answers; and the address it serves.
pub fn exporter(zklock: support::Zklock, extra: &[&str]) -> (Running, String) {
    let address = format!("127.0.0.1:{}", support::free_ports(1)[0]);
    let running = zklock
        .args(["exporter", "--listen", &address])
        .args(extra)
        .spawn();
    wait_until(WAIT, "the exporter answers", || {
        get(&address, "/metrics", None).is_some_and(|(status, _, _)| status == 200)
    });
    (running, address)
}

/// `GET path` over HTTP/1.0 with `accept`: the status, the content type and
/// the body; `None` when nothing answers.
pub fn get(address: &str, path: &str, accept: Option<&str>) -> Option<(u16, String, String)> {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    stream.set_read_timeout(Some(WAIT)).ok()?;
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {address}\r\n{accept}\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let content_type = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    Some((status, content_type, body.to_owned()))
}

/// The value of the series `name` whose lock label is `lock` ("" for one
/// without), as the exporter serves it now in the text format.
pub fn served(address: &str, name: &str, lock: &str) -> Option<f64> {
    let (_, _, body) = get(address, "/metrics", None)?;
    samples(&body).get(name)?.get(lock).copied()
}

#[test]
fn the_exporter_negotiates_its_format_bounds_its_series_and_stops_on_sigterm() {
    let env = TestEnv::new();
    let held: Vec<(Running, String)> = ["m1", "m2", "m3"].iter().map(|l| hold(&env, l)).collect();
    let waiter = env.zklock(["lock", "m2"]).spawn();
    wait_for_waiters(&env, "/locks/m2", 1);
    let (mut running, address) = exporter(env.zklock(Vec::<&str>::new()), &["--max-locks", "1"]);
    // The most contended lock has series of its own, the rest add up.
    wait_until(WAIT, "m2 and the other two are served", || {
        served(&address, "zklock_lock_waiters", "/locks/m2") == Some(1.0)
            && served(&address, "zklock_lock_holders", "(other)") == Some(2.0)
    });
    assert_eq!(
        served(&address, "zklock_exporter_locks_aggregated", ""),
        Some(2.0)
    );
    assert_eq!(served(&address, "zklock_exporter_connected", ""), Some(1.0));
    let (status, content_type, text) = get(&address, "/metrics", None).expect("an answer");
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/plain; version=0.0.4; charset=utf-8")
    );
    promtool_accepts(&text);
    assert!(!text.contains("# EOF"));
    let prometheus_accept =
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (_, content_type, open) =
        get(&address, "/metrics", Some(prometheus_accept)).expect("an answer");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(open.ends_with("# EOF\n") && open.contains("# TYPE zklock_acquisitions counter\n"));
    let (status, _, page) = get(&address, "/", None).expect("an answer");
    assert!(status == 200 && page.contains("/metrics"), "{page}");
    assert_eq!(get(&address, "/nothing", None).map(|a| a.0), Some(404));

    running.signal(libc::SIGTERM);
    running.wait(WAIT).assert_success();
    waiter.signal(libc::SIGTERM);
    for (mut holder, _) in held {
        holder.signal(libc::SIGTERM);
        holder.wait(WAIT).assert_success();
    }
}

#[test]
fn the_exporter_counts_every_how_from_0_reads_nothing_for_a_scrape_and_stops_on_sigint() {
    let env = TestEnv::new();
    let (mut holder, _) = hold(&env, "r");
    // The exporter's every request, as the proxy saw it; its survey and
    // cycle search run once, at the start, and not again in this test.
    let proxy = FaultProxy::start(env.servers());
    let (mut running, address) = exporter(
        support::Zklock::new(Vec::<&str>::new()).hosts(proxy.hosts(&env)),
        &["--survey-interval", "1h"],
    );
    let scrape = || get(&address, "/metrics", None).expect("an answer").2;
    let every_how = [
        "broken",
        "deleted_while_session_alive",
        "gave_up",
        "lost",
        "max_hold",
        "reaped",
        "released",
        "revoked",
        "session_ended",
        "unknown",
    ]
    .map(|how| (how.to_owned(), 0.0));
    assert_eq!(
        by_label(&scrape(), "zklock_hold_ends_total", "how"),
        BTreeMap::from(every_how),
        "every how is served at 0 before any hold ends"
    );
    wait_until(WAIT, "the watch's figures and a finished search", || {
        let text = scrape();
        let figures = samples(&text);
        figures["zklock_exporter_connected"][""] == 1.0
            && figures
                .get("zklock_lock_holders")
                .is_some_and(|holders| holders.get("/locks/r") == Some(&1.0))
            && !cycles(&text).is_empty()
    });
    // Pings keep the session; anything else would be a reading.
    let requests = || -> Vec<ClientMessage> {
        proxy
            .client_messages()
            .into_iter()
            .filter(|m| matches!(m, ClientMessage::Request { op, .. } if *op != op::PING))
            .collect()
    };
    let before = requests();
    assert!(!before.is_empty(), "the exporter reads through the proxy");
    let open_metrics = Some("application/openmetrics-text;version=1.0.0");
    for _ in 0..50 {
        for accept in [None, open_metrics] {
            let (status, _, _) = get(&address, "/metrics", accept).expect("an answer");
            assert_eq!(status, 200);
        }
    }
    // Renderings after the scrapes: a reading a scrape set off would have
    // gone out by then.
    let scraped = served(&address, "zklock_exporter_last_update_seconds", "").expect("served");
    wait_until(WAIT, "two renderings after the scrapes", || {
        served(&address, "zklock_exporter_last_update_seconds", "")
            .is_some_and(|update| update >= scraped + 2.0)
    });
    let after = requests();
    assert_eq!(
        after[before.len()..],
        [],
        "requests sent while scrapes were served"
    );
    running.signal(libc::SIGINT);
    running.wait(WAIT).assert_success();
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn the_exporter_listens_on_the_loopback_port_9731_unless_told() {
    // Where nothing else listens, the listening sockets once it started
    // (the kernel's table: address and port in hex, state 0A is LISTEN),
    // and its exit on SIGTERM.
    let listened = "\"$@\" 2>/dev/null &
pid=$!
i=0
while [ $i -lt 300 ] && ! grep -q ' 0A ' /proc/net/tcp /proc/net/tcp6; do
    sleep 0.1
    i=$((i + 1))
done
cat /proc/net/tcp /proc/net/tcp6
kill -TERM $pid
wait $pid
echo exit=$?";
    let exporter = support::Zklock::new(["exporter"]).hosts("127.0.0.1:1");
    let run = support::in_an_empty_network(&exporter, listened);
    run.assert_success();
    let listening: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(3) == Some(&"0A")).then(|| fields[1])
        })
        .collect();
    assert_eq!(listening, ["0100007F:2603"], "{}", run.stdout);
    assert_eq!(run.stdout.lines().last(), Some("exit=0"), "{}", run.stdout);
}

/// Percent-encodes a PromQL query for a URL.
fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus server of its own, scraping `target` every second.
struct Prometheus {
    _running: Running,
    _scratch: Scratch,
    address: String,
}

impl Prometheus {
    fn start(target: &str) -> Prometheus {
        let binary = support::find_on_path("prometheus").unwrap_or_else(|| {
            panic!(
                "prometheus is not installed: run scripts/setup (or: apt-get install prometheus)"
            )
        });
        let scratch = Scratch::new();
        let config = scratch.file("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: zklock\n    \
                 static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("write the Prometheus config");
        let address = format!("127.0.0.1:{}", support::free_ports(1)[0]);
        let mut command = Command::new(binary);
        command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.file("data").display()
            ))
            .arg(format!("--web.listen-address={address}"));
        let running = Running::start(command, "prometheus".to_owned(), None);
        let prometheus = Prometheus {
            _running: running,
            _scratch: scratch,
            address,
        };
        wait_until(Duration::from_secs(60), "Prometheus is ready", || {
            get(&prometheus.address, "/-/ready", None).is_some_and(|a| a.0 == 200)
        });
        prometheus
    }

    /// The value of the one series `query` selects now; `None` when none.
    fn value(&self, query: &str) -> Option<f64> {
        let path = format!("/api/v1/query?query={}", url_encoded(query));
        let (_, _, body) = get(&self.address, &path, None)?;
        let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
        let result = answer["data"]["result"].as_array()?;
        result.first()?["value"][1].as_str()?.parse().ok()
    }
}

#[test]
fn a_real_prometheus_scraping_the_exporter_sees_holds_begin_and_end() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/p");
    let (_exporter, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let prometheus = Prometheus::start(&address);
    let holders = r#"zklock_lock_holders{lock="/locks/p"}"#;
    let seen = |query: &str, value: f64| {
        wait_until(
            Duration::from_secs(60),
            &format!("Prometheus has {query} = {value}"),
            || prometheus.value(query) == Some(value),
        );
    };
    seen("zklock_exporter_connected", 1.0);
    // The cycle search ran once at the start, and found none.
    seen(r#"sum(zklock_deadlock_cycles)"#, 0.0);
    seen(
        r#"count(zklock_deadlock_cycles{certain=~"true|false"})"#,
        2.0,
    );
    let (mut holder, _) = hold(&env, "p");
    seen(holders, 1.0);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    seen("zklock_acquisitions_total", 1.0);
    seen("sum(zklock_hold_ends_total)", 1.0);
    seen("zklock_hold_duration_seconds_count", 1.0);
}

#[test]
fn the_exporter_serves_the_last_state_through_a_lost_session_and_recovers() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let proxy = FaultProxy::start(env.servers());
    env.zk().mkdir_p("/locks/q");
    let (_exporter, address) = exporter(
        support::Zklock::new(["--session-timeout", "1s"]).hosts(proxy.hosts(&env)),
        &[],
    );
    wait_until(WAIT, "the exporter is connected", || {
        served(&address, "zklock_exporter_connected", "") == Some(1.0)
    });
    proxy.freeze();
    wait_until(WAIT, "the exporter says it is cut off", || {
        served(&address, "zklock_exporter_connected", "") == Some(0.0)
    });
    // Cut off, it still answers, with what it knew.
    assert!(served(&address, "zklock_exporter_last_update_seconds", "").is_some());
    let (mut holder, _) = hold(&env, "q");
    proxy.pass();
    wait_until(
        WAIT,
        "the exporter is back and sees the hold made meanwhile",
        || {
            served(&address, "zklock_exporter_connected", "") == Some(1.0)
                && served(&address, "zklock_lock_holders", "/locks/q") == Some(1.0)
        },
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

#[test]
fn the_exporter_serves_a_member_cut_from_its_quorum_and_sends_no_write() {
    let ensemble = ZkEnsemble::start_with(3, &ZkOptions::default().read_only_mode());
    let env = TestEnv::with_ensemble(&ensemble);
    // A holder from before the quorum loss, as a persistent node of kazoo's
    // (the one library whose persistent nodes are contenders): a server in
    // read-only mode keeps no session alive that could hold an ephemeral one.
    env.zk().mkdir_p("/locks/ro");
    env.zk().create_with(
        "/locks/ro/0123456789abcdef0123456789abcdef__lock__",
        b"",
        &zookeeper_client::CreateMode::PersistentSequential
            .with_acls(zookeeper_client::Acls::anyone_all()),
    );
    let keep = (ensemble.leader() + 2) % 3;
    for i in (0..3).filter(|&i| i != keep) {
        ensemble.server(i).kill();
    }
    let survivor = ensemble.server(keep);
    wait_until(WAIT, "the survivor serves read-only", || {
        survivor.mode().as_deref() == Some("read-only")
    });
    let proxy = FaultProxy::start(&survivor.address());
    let (mut running, address) = exporter(
        support::Zklock::new(Vec::<&str>::new()).hosts(proxy.hosts(&env)),
        &["--survey-interval", "1s"],
    );
    // The watch's figures, and the cycle search's, which reads on a
    // session of its own.
    wait_until(WAIT, "the exporter serves the holder and a search", || {
        served(&address, "zklock_exporter_connected", "") == Some(1.0)
            && served(&address, "zklock_lock_holders", "/locks/ro") == Some(1.0)
            && served(&address, "zklock_deadlock_cycles", "").is_some()
    });
    running.signal(libc::SIGTERM);
    running.wait(WAIT).assert_success();
    let sent = proxy.client_messages();
    assert!(
        sent.iter()
            .filter(|m| matches!(m, ClientMessage::Connect { .. }))
            .all(|m| *m == ClientMessage::Connect { read_only: true }),
        "every session is asked for read-only: {sent:#?}"
    );
    let writes: Vec<&ClientMessage> = sent
        .iter()
        .filter(|m| matches!(m, ClientMessage::Request { op, .. } if op::WRITES.contains(op)))
        .collect();
    assert!(writes.is_empty(), "the exporter wrote: {writes:#?}");
}

/// `line`'s position among the screen's lines that mention a lock.
fn row_of(screen: &str, lock: &str) -> Option<usize> {
    screen.lines().position(|line| line.contains(lock))
}

#[test]
fn top_shows_the_locks_at_80x24_sorts_and_restores_the_terminal_on_q_and_ctrl_c() {
    let env = TestEnv::new();
    // t1 held first and alone; t2 held later, with a waiter.
    let (mut older, _) = hold(&env, "t1");
    let (mut contended, _) = hold(&env, "t2");
    let waiter = env.zklock(["lock", "t2"]).spawn();
    wait_for_waiters(&env, "/locks/t2", 1);
    let tmux = Tmux::start(80, 24);
    let scratch = Scratch::new();
    let before = tmux.stty(&scratch.file("before"));
    let command = command_line(&env.zklock(["top"]));
    for quit in [&["q"][..], &["C-c"]] {
        tmux.launch(&command, &scratch);
        let screen = support::wait_for(WAIT, "top shows both locks", || {
            let screen = tmux.screen();
            (screen.contains("sort: contention")
                && screen.contains("/locks/t1")
                && screen.contains("/locks/t2"))
            .then_some(screen)
        });
        assert!(
            row_of(&screen, "/locks/t2") < row_of(&screen, "/locks/t1"),
            "{screen}"
        );
        assert!(screen.lines().all(|line| line.chars().count() <= 80));
        tmux.send(&["s"]);
        let screen = support::wait_for(WAIT, "top sorts by hold age", || {
            let screen = tmux.screen();
            screen.contains("sort: hold age").then_some(screen)
        });
        assert!(
            row_of(&screen, "/locks/t1") < row_of(&screen, "/locks/t2"),
            "{screen}"
        );
        tmux.send(quit);
        assert_eq!(tmux.ended(&before, &scratch), 0);
    }
    waiter.signal(libc::SIGTERM);
    for holder in [&mut older, &mut contended] {
        holder.signal(libc::SIGTERM);
        holder.wait(WAIT).assert_success();
    }
}

#[test]
fn top_shows_an_opened_lock_s_wait_chain_to_the_cycle() {
    let env = TestEnv::new();
    // Session one holds /x/a and waits on /x/b, where session two, first
    // in line, holds and waits on /x/a.
    let _crossed = super::deadlocks::crossed_zklocks(&env, false);
    let blocker = env.zk().children("/x/b")[0].clone();
    let tmux = Tmux::start(80, 24);
    tmux.send(&[&command_line(&env.zklock(["top", "/x"])), "Enter"]);
    wait_until(WAIT, "top shows /x/a", || tmux.screen().contains("/x/a"));
    tmux.send(&["/", "x/a", "Enter"]);
    wait_until(WAIT, "top shows /x/a alone", || {
        let screen = tmux.screen();
        screen.contains("filter: x/a") && !screen.contains("/x/b")
    });
    tmux.send(&["Enter"]);
    let hop = format!("via locks on /x/b/{blocker}");
    let screen = support::wait_for(WAIT, "the opened lock shows its chain", || {
        let screen = tmux.screen();
        screen.contains(&hop).then_some(screen)
    });
    assert!(screen.lines().all(|line| line.chars().count() <= 80));
    // Esc goes back to the list, filter kept; a second one clears it.
    tmux.send(&["Escape"]);
    wait_until(WAIT, "top lists /x/a alone again", || {
        let screen = tmux.screen();
        screen.contains("HOLD") && screen.contains("filter: x/a") && !screen.contains(&hop)
    });
    tmux.send(&["Escape"]);
    wait_until(WAIT, "top lists both locks", || {
        let screen = tmux.screen();
        screen.contains("/x/a") && screen.contains("/x/b") && !screen.contains("filter:")
    });
    tmux.send(&["q"]);
    tmux.wait_for_prompt();
}

/// Signals that end a process by default and can be caught, as `kill`
/// sends them to top from elsewhere: top gives the terminal back and dies
/// of each. (SIGPIPE ends nothing: the Rust runtime ignores it. SIGINT is
/// left out here only because the shell drops the rest of a command line
/// whose command died of it, and with it the record of the exit code.)
const ENDING_SIGNALS: [i32; 7] = [
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
];

#[test]
fn top_restores_the_terminal_on_every_ending_signal_and_on_a_lost_connection() {
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    env.zk().mkdir_p("/locks/t");
    env.zk().create_ephemeral_sequential("/locks/t/lock-", b"");
    let tmux = Tmux::start(80, 24);
    let scratch = Scratch::new();
    let before = tmux.stty(&scratch.file("before"));
    let pid = scratch.file("pid");
    // sh writes down its pid, which top then has.
    let top = |args: &[&str]| {
        let _ = std::fs::remove_file(&pid);
        let command = command_line(&env.zklock(args));
        format!(
            "sh -c 'echo $$ > \"$0\"; exec \"$@\"' '{}' {command}",
            pid.display()
        )
    };
    let showing = || {
        wait_until(WAIT, "top shows the lock", || {
            tmux.screen().contains("/locks/t")
        });
    };
    for signal in ENDING_SIGNALS {
        tmux.launch(&top(&["top"]), &scratch);
        showing();
        let top_pid: i32 = support::wait_for(WAIT, "top's pid is written", || {
            std::fs::read_to_string(&pid).ok()?.trim().parse().ok()
        });
        // SAFETY: kill(2) has no memory-safety preconditions.
        assert_eq!(unsafe { libc::kill(top_pid, signal) }, 0);
        assert_eq!(
            tmux.ended(&before, &scratch),
            128 + signal,
            "signal {signal}"
        );
    }
    // The server gone for longer than the session: no new session can be
    // had, and top ends.
    let patience = ["--session-timeout", "2s", "--connect-timeout", "1s", "top"];
    tmux.launch(&top(&patience), &scratch);
    showing();
    server.stop();
    assert_eq!(tmux.ended(&before, &scratch), 3);
}

/// The last word of the screen's line that shows `lock`: its HOST.
fn host_of(screen: &str, lock: &str) -> Option<String> {
    let row = screen.lines().find(|line| line.contains(lock))?;
    row.split_whitespace().last().map(str::to_owned)
}

#[test]
fn top_s_host_column_waits_for_the_survey_and_marks_a_holder_without_a_connection() {
    let env = TestEnv::new();
    let (mut connected, _) = hold(&env, "h1");
    // A holder whose connection is gone while its session lives on.
    let cut_off = FaultProxy::start(env.servers());
    let gone = support::Zk::connect_with(&cut_off.hosts(&env), |c| {
        c.with_session_timeout(Duration::from_secs(30))
    });
    env.zk().mkdir_p("/locks/h2");
    gone.create_ephemeral_sequential("/locks/h2/lock-", b"");
    cut_off.cut();
    // top's survey of the members is held back until the test has seen
    // the column before it.
    let proxy = FaultProxy::start(env.servers());
    proxy.hold_four_letter_words(true);
    let tmux = Tmux::start(80, 24);
    let top = env.zklock(["top"]).hosts(proxy.hosts(&env));
    tmux.send(&[&command_line(&top), "Enter"]);
    wait_until(WAIT, "top asks the members who is connected", || {
        proxy.four_letter_words_asked() > 0
    });
    let screen = support::wait_for(WAIT, "top shows both locks", || {
        let screen = tmux.screen();
        (screen.contains("/locks/h1") && screen.contains("/locks/h2")).then_some(screen)
    });
    for lock in ["/locks/h1", "/locks/h2"] {
        assert_eq!(host_of(&screen, lock).as_deref(), Some("-"), "{screen}");
    }
    proxy.hold_four_letter_words(false);
    wait_until(WAIT, "top shows each holder's host", || {
        let screen = tmux.screen();
        host_of(&screen, "/locks/h1").as_deref() == Some("127.0.0.1")
            && host_of(&screen, "/locks/h2").as_deref() == Some("disconnected")
    });
    tmux.send(&["q"]);
    tmux.wait_for_prompt();
    connected.signal(libc::SIGTERM);
    connected.wait(WAIT).assert_success();
    drop(gone);
}

#[test]
fn no_color_leaves_top_without_colour() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/locks/c");
    env.zk().create_ephemeral_sequential("/locks/c/lock-", b"");
    for (no_color, expected) in [(None, true), (Some("1"), false)] {
        let mut zklock = env.zklock(["top"]);
        if let Some(value) = no_color {
            zklock = zklock.env("NO_COLOR", value);
        }
        let run = crate::terminal::on_terminal(&zklock, &["expect:/locks/c", "send:q"]);
        run.assert_success();
        assert_eq!(
            crate::terminal::coloured(&run.stdout),
            expected,
            "NO_COLOR={no_color:?}: {run:?}"
        );
    }
}

#[test]
fn top_off_a_terminal_is_a_usage_error() {
    let env = TestEnv::new();
    env.zklock(["top"]).run().assert_code(2);
}

#[test]
fn two_exporters_serve_the_same_tree_side_by_side() {
    let env = TestEnv::new();
    let (mut holder, _) = hold(&env, "s");
    let (_first, one) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let (_second, other) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    for address in [&one, &other] {
        wait_until(WAIT, "each exporter serves the hold", || {
            served(address, "zklock_lock_holders", "/locks/s") == Some(1.0)
        });
    }
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    for address in [&one, &other] {
        // With no contender left, the directory is no lock: its series go.
        wait_until(WAIT, "each exporter sees the hold end", || {
            served(address, "zklock_exporter_connected", "") == Some(1.0)
                && served(address, "zklock_lock_holders", "/locks/s").is_none()
        });
    }
}

/// The series of the family `name` in a text exposition, each with one
/// label, `label`, by its value; empty when the family is absent.
fn by_label(text: &str, name: &str, label: &str) -> BTreeMap<String, f64> {
    let start = format!("{name}{{{label}=\"");
    text.lines()
        .filter_map(|line| line.strip_prefix(start.as_str()))
        .map(|rest| {
            let (labelled, value) = rest.split_once("\"} ").expect("one label");
            (labelled.to_owned(), value.parse().expect("a number"))
        })
        .collect()
}

/// The `zklock_deadlock_cycles` series of a text exposition, by their
/// `certain` label; empty when the family is absent.
fn cycles(text: &str) -> BTreeMap<String, f64> {
    by_label(text, "zklock_deadlock_cycles", "certain")
}

/// The cycle counts `-o prometheus ls PATH` prints, once promtool took them.
fn listed_cycles(env: &TestEnv, path: &str) -> BTreeMap<String, f64> {
    let run = env.zklock(["-o", "prometheus", "ls", path]).run();
    run.assert_success();
    promtool_accepts(&run.stdout);
    cycles(&run.stdout)
}

/// The counts of certain and possible cycles, as the family has them.
fn counted(certain: f64, possible: f64) -> BTreeMap<String, f64> {
    BTreeMap::from([("true".to_owned(), certain), ("false".to_owned(), possible)])
}

#[test]
fn ls_counts_no_cycle_as_0_a_certain_one_and_a_possible_one() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/x/a");
    assert_eq!(listed_cycles(&env, "/x"), counted(0.0, 0.0));
    // Two zklocks crossing two locks, as their owner records prove.
    let crossed = super::deadlocks::crossed_zklocks(&env, false);
    assert_eq!(listed_cycles(&env, "/x"), counted(1.0, 0.0));
    drop(crossed);
    wait_until(WAIT, "the crossed sessions' nodes are gone", || {
        env.zk().children_if_any("/x/a").is_empty()
    });
    // The same with a `-w` deadline recorded: it may give up, so possible.
    let _crossed = super::deadlocks::crossed_zklocks(&env, true);
    assert_eq!(listed_cycles(&env, "/x"), counted(0.0, 1.0));
    // The filters choose the locks, not the cycles: one runs across locks.
    let run = env
        .zklock(["-o", "prometheus", "ls", "/x", "--older-than", "1h"])
        .run();
    assert!(
        !run.stdout.contains("zklock_lock_holders"),
        "{}",
        run.stdout
    );
    assert_eq!(cycles(&run.stdout), counted(0.0, 1.0));
}

#[test]
fn the_exporter_searches_for_cycles_on_its_interval() {
    let env = TestEnv::new();
    env.zk().mkdir_p("/x/a");
    let interval = ["/x", "--survey-interval", "1s"];
    let (mut running, address) = exporter(env.zklock(Vec::<&str>::new()), &interval);
    let served_cycles = || get(&address, "/metrics", None).map(|(_, _, body)| cycles(&body));
    wait_until(WAIT, "the exporter counts no cycle", || {
        served_cycles() == Some(counted(0.0, 0.0))
    });
    let (one, two, _) = super::deadlocks::crossed_zklocks(&env, false);
    wait_until(WAIT, "the exporter counts the certain cycle", || {
        served_cycles() == Some(counted(1.0, 0.0))
    });
    drop((one, two));
    wait_until(WAIT, "the exporter sees the cycle end", || {
        served_cycles() == Some(counted(0.0, 0.0))
    });
    running.signal(libc::SIGTERM);
    running.wait(WAIT).assert_success();
}

#[test]
fn a_stopped_exporter_leaves_no_session_behind() {
    // A server of its own: its sessions are the test's and the exporter's.
    let server = ZkServer::new();
    let env = TestEnv::with_server(&server);
    let sessions = || {
        server.mntr()["zk_global_sessions"]
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    };
    for lock in 0..300 {
        env.zk().mkdir_p(&format!("/x/lock-{lock}"));
    }
    // Searched for cycles without a pause: whenever it is stopped, a
    // search is most likely reading on its own session.
    let interval = ["/x", "--survey-interval", "0s", "--session-timeout", "60s"];
    let tests_own = sessions();
    let (mut running, address) = exporter(env.zklock(Vec::<&str>::new()), &interval);
    wait_until(WAIT, "the watch's and a search's sessions", || {
        served(&address, "zklock_exporter_connected", "") == Some(1.0)
            && sessions() >= tests_own + 2
    });
    running.signal(libc::SIGTERM);
    running.wait(WAIT).assert_success();
    // Left to expire, a session would stay for its 60 seconds.
    wait_until(
        Duration::from_secs(20),
        "no session of the exporter left",
        || sessions() == tests_own,
    );
}
