//! The integration-test harness: real ZooKeeper servers, one chroot per test,
//! the `zklock` binary as a command, and a blocking ZooKeeper client for
//! arranging and inspecting nodes.
//!
//! The suite's `main.rs` declares it once for every area. The pieces:
//!
//! - [`ZkServer`]: a standalone server on a free loopback port with a temp
//!   data dir; `stop`/`kill`/`start`/`restart`/`freeze`/`thaw` for fault
//!   tests, and four-letter words ([`ZkServer::four_letter`]).
//! - [`shared_server`]: one server per test binary, started on first use and
//!   torn down when the test process ends, however it ends.
//! - [`ZkEnsemble`]: a three-server (or N-server) ensemble on loopback.
//! - [`TestEnv`]: one per test: a unique chroot, `zklock` commands aimed at
//!   it, and a [`Zk`] client rooted at it.
//! - [`wait_until`] / [`wait_for`]: polling with a deadline, never a bare sleep.
//! - [`json`]: typed mirrors of the JSON output contract.
//! - [`proxy`]: a TCP proxy that freezes, cuts, or drops a connection right
//!   after a chosen request, for fault tests.
//! - [`tmux`]: a real terminal whose screen a test reads, for what a person
//!   sees (wrapping, resizes).
//! - [`watches`]: what each session watches, from the server's `wchc`.
//! - [`fencing`]: the fencing log holders write, and its checker (no two
//!   holders overlap, fences grow in grant order), and the check that no node
//!   of a dead session is left.
//! - [`hbase`]: HBase's lock nodes, written as HBase writes them.
//!
//! If Java or ZooKeeper is missing, the harness panics and says how to
//! install them: a test that cannot run must fail, not skip.

pub mod client;
pub mod cmd;
pub mod cotenants;
pub mod digest;
pub mod fencing;
pub mod hbase;
pub mod json;
pub mod kdc;
pub mod peers;
pub mod proxy;
pub mod secured;
pub mod server;
pub mod tmux;
pub mod watches;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use client::Zk;
pub use cmd::{Blackhole, Run, Running, TestEnv, Zklock, dead_port};
pub use digest::{digest_acl, digest_id};
pub use json::{Contender, Lock, NodeReport};
pub use server::{Release, ZkEnsemble, ZkOptions, ZkServer, release_server, shared_server};

/// The ZooKeeper jar of Debian's `zookeeper` package.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";

/// What a test says when ZooKeeper or Java is missing.
pub const NOT_INSTALLED: &str = "ZooKeeper is not installed: run scripts/setup (or: apt-get install zookeeper default-jre-headless)";

/// Panics with [`NOT_INSTALLED`] unless `java` is on PATH and the ZooKeeper
/// jar is present.
pub fn require_zookeeper() {
    let java = find_on_path("java");
    let jar = Path::new(ZOOKEEPER_JAR).is_file();
    if java.is_none() || !jar {
        let missing = match (java.is_none(), jar) {
            (true, false) => format!("no `java` on PATH and no {ZOOKEEPER_JAR}"),
            (true, true) => "no `java` on PATH".to_owned(),
            _ => format!("no {ZOOKEEPER_JAR}"),
        };
        panic!("{NOT_INSTALLED} ({missing})");
    }
}

/// Runs the shell `script`, with zklock's command line as its `"$@"`, in a
/// network namespace of its own: its loopback is up and nothing listens
/// there, so whatever zklock connects to is refused, and whatever it
/// listens on is free.
pub fn in_an_empty_network(zklock: &Zklock, script: &str) -> Run {
    secured::require_tool("unshare", "util-linux");
    secured::require_tool("/sbin/ip", "iproute2");
    let script = format!("/sbin/ip link set lo up || exit 97\n{script}");
    let command = zklock.through(&[
        "unshare",
        "--user",
        "--map-root-user",
        "--net",
        "sh",
        "-c",
        &script,
        "sh",
    ]);
    Running::start(command, zklock.cmdline(), None).wait(Duration::from_secs(30))
}

/// Runs zklock in a mount namespace of its own in which the file `source`
/// is bound over `target`: the machine's own `target` is never touched.
pub fn with_file_bound_over(zklock: &Zklock, source: &str, target: &str) -> Run {
    secured::require_tool("unshare", "util-linux");
    let command = zklock.through(&[
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        "mount --bind \"$0\" \"$1\" || exit 97\nshift\nexec \"$@\"",
        source,
        target,
    ]);
    Running::start(command, zklock.cmdline(), None).wait(Duration::from_secs(30))
}

/// What `program args` prints, trimmed; fails the test unless it succeeds.
pub fn output_of(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(out.status.success(), "{program} {args:?} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The milliseconds since the epoch of an RFC 3339 time in UTC (`...Z`),
/// as date(1) reads it.
pub fn rfc3339_ms(time: &str) -> i64 {
    assert!(
        time.ends_with('Z') && time.contains('T'),
        "not RFC 3339 UTC: {time}"
    );
    output_of("date", &["-u", "-d", time, "+%s%3N"])
        .parse()
        .unwrap_or_else(|e| panic!("date(1) read {time:?} as no time: {e}"))
}

/// A moment (milliseconds since the epoch) as people are shown it in the
/// zone `offset` east of UTC, in seconds: `2026-11-22 16:20:53 +01:00`.
pub fn local_time(ms: i64, offset: i64) -> String {
    let seconds = format!("@{}", ms.div_euclid(1000) + offset);
    let shown = output_of("date", &["-u", "-d", &seconds, "+%Y-%m-%d %H:%M:%S"]);
    let sign = if offset < 0 { '-' } else { '+' };
    let minutes = offset.abs() / 60;
    format!("{shown} {sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// The first executable called `name` on PATH.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Polls `condition` every 10 ms until it holds; panics naming `what` when
/// `timeout` passes first. Returns how long it took.
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    wait_for(timeout, what, || condition().then_some(()));
    start.elapsed()
}

/// Polls `probe` every 10 ms until it returns `Some`, and returns that value;
/// panics naming `what` when `timeout` passes first.
pub fn wait_for<T>(timeout: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        if start.elapsed() >= timeout {
            panic!("timed out after {timeout:?} waiting until {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Fails unless a lease of `lease`, granted after a clock read `freed` ago,
/// ended no sooner than `lease` after it (the grant came later still) and
/// not much later: within 6 s more, room for a loaded machine, where a
/// hold kept to its session's expiry (10 s) would be later.
#[track_caller]
pub fn assert_lease_ran_its_course(freed: Duration, lease: Duration) {
    assert!(
        freed >= lease && freed < lease + Duration::from_secs(6),
        "a lease of {lease:?} ended {freed:?} after it was asked for"
    );
}

/// `n` distinct loopback ports that were free a moment ago (bound together on
/// port 0, then released). Another process may take one before we use it;
/// servers retry on a collision.
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("local address").port())
        .collect()
}

/// A process-unique number, for names.
pub fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The running test's name (the test harness names each test's thread after
/// it), made safe for a znode or file name; "test" when there is none.
pub fn test_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("test");
    let name = name.rsplit("::").next().unwrap_or(name);
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if safe.is_empty() || safe == "main" {
        "test".to_owned()
    } else {
        safe
    }
}

/// A scratch directory for files that commands under test write; removed
/// when dropped.
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A new, empty directory under the system temp dir.
    pub fn new() -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "zklock-test-{}-{}-{}",
            std::process::id(),
            unique(),
            test_name()
        ));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch { dir }
    }

    /// The path of `name` inside the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether process `pid` ignores `signal` (rather than catching it or
/// leaving it to its default), from its `/proc` status.
pub fn ignores(pid: i32, signal: i32) -> bool {
    let mask = |field: &str| {
        let status =
            std::fs::read_to_string(format!("/proc/{pid}/status")).expect("a live process");
        let line = status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .expect("the field");
        u64::from_str_radix(line.trim(), 16).expect("a hex mask") & (1 << (signal - 1)) != 0
    };
    mask("SigIgn:") && !mask("SigCgt:")
}

/// True while `pid` exists and is neither a zombie nor dead (a stopped
/// process counts as alive).
pub fn process_alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].trim_start().chars().next());
    !matches!(state, None | Some('Z') | Some('X') | Some('x'))
}
